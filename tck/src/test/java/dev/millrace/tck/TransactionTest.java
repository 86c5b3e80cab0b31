package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.NOTHING_MS;
import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.Connection;
import jakarta.jms.IllegalStateException;
import jakarta.jms.IllegalStateRuntimeException;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/** Local transactions: sends and receipts take effect together at commit, are undone by rollback. */
@TckTest
@Timeout(30)
@DisplayName("6.2.7 Local transactions")
class TransactionTest {

    private static Session transacted(Jms jms) throws Exception {
        return jms.startedConnection().createSession(true, Session.SESSION_TRANSACTED);
    }

    @Test
    @DisplayName("6.2.7 messages sent in a transaction are invisible until commit")
    void shouldHideSendsUntilCommit(Jms jms) throws Exception {
        Session tx = transacted(jms);
        Queue q = jms.queue();
        tx.createProducer(q).send(tx.createTextMessage("x"));
        MessageConsumer consumer = jms.session().createConsumer(q);
        assertThat(consumer.receive(NOTHING_MS)).isNull();
        tx.commit();
        assertThat(consumer.receive(RECEIVE_MS)).isNotNull();
    }

    @Test
    @DisplayName("6.2.7 rollback discards the messages sent in the transaction")
    void shouldDiscardSendsOnRollback(Jms jms) throws Exception {
        Session tx = transacted(jms);
        Queue q = jms.queue();
        MessageProducer producer = tx.createProducer(q);
        producer.send(tx.createTextMessage("discarded"));
        tx.rollback();
        producer.send(tx.createTextMessage("kept"));
        tx.commit();
        MessageConsumer consumer = jms.session().createConsumer(q);
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("kept");
        assertThat(consumer.receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("6.2.7 rollback redelivers the messages received in the transaction, JMSRedelivered set")
    void shouldRedeliverReceiptsOnRollback(Jms jms) throws Exception {
        Queue q = jms.queue();
        Session plain = jms.session();
        plain.createProducer(q).send(plain.createTextMessage("x"));
        Session tx = transacted(jms);
        MessageConsumer consumer = tx.createConsumer(q);
        Message first = consumer.receive(RECEIVE_MS);
        assertThat(first.getJMSRedelivered()).isFalse();
        tx.rollback();
        Message again = consumer.receive(RECEIVE_MS);
        assertThat(again).isNotNull();
        assertThat(again.getJMSRedelivered()).isTrue();
        assertThat(again.getJMSMessageID()).isEqualTo(first.getJMSMessageID());
        tx.commit();
    }

    @Test
    @DisplayName("6.2.7 commit consumes the messages received in the transaction")
    void shouldConsumeReceiptsOnCommit(Jms jms) throws Exception {
        Queue q = jms.queue();
        Session plain = jms.session();
        plain.createProducer(q).send(plain.createTextMessage("x"));
        Connection c = jms.startedConnection();
        Session tx = c.createSession(true, Session.SESSION_TRANSACTED);
        assertThat(tx.createConsumer(q).receive(RECEIVE_MS)).isNotNull();
        tx.commit();
        tx.close();
        assertThat(jms.session().createConsumer(q).receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("6.2.7 closing a transacted session rolls back its transaction")
    void shouldRollBackOnClose(Jms jms) throws Exception {
        Queue q = jms.queue();
        Session tx = transacted(jms);
        tx.createProducer(q).send(tx.createTextMessage("never"));
        tx.close();
        assertThat(jms.session().createConsumer(q).receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("6.2.7 a receive and a send commit together (consume-transform-produce)")
    void shouldCommitAReceiveAndASendTogether(Jms jms) throws Exception {
        Queue in = jms.queue();
        Queue out = jms.queue();
        Session plain = jms.session();
        plain.createProducer(in).send(plain.createTextMessage("order"));
        Session tx = transacted(jms);
        TextMessage m = (TextMessage) tx.createConsumer(in).receive(RECEIVE_MS);
        tx.createProducer(out).send(tx.createTextMessage(m.getText() + "-done"));
        MessageConsumer outConsumer = plain.createConsumer(out);
        assertThat(outConsumer.receive(NOTHING_MS)).isNull();
        tx.commit();
        assertThat(((TextMessage) outConsumer.receive(RECEIVE_MS)).getText()).isEqualTo("order-done");
    }

    @Test
    @DisplayName("6.2.7 transacted topic publish: subscribers see the message only after commit")
    void shouldHideTopicSendsUntilCommit(Jms jms) throws Exception {
        Topic t = jms.topic();
        MessageConsumer subscriber = jms.session().createConsumer(t);
        Session tx = transacted(jms);
        tx.createProducer(t).send(tx.createTextMessage("x"));
        assertThat(subscriber.receive(NOTHING_MS)).isNull();
        tx.commit();
        assertThat(subscriber.receive(RECEIVE_MS)).isNotNull();
    }

    @Test
    @DisplayName("6.2.7 commit and rollback of a non-transacted session throw IllegalStateException")
    void shouldRefuseCommitWithoutTransaction(Jms jms) throws Exception {
        Session s = jms.session();
        assertThatThrownBy(s::commit).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(s::rollback).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("6.2.7 commit of a closed transacted session throws IllegalStateException")
    void shouldRefuseCommitOnAClosedSession(Jms jms) throws Exception {
        Session tx = transacted(jms);
        tx.close();
        assertThatThrownBy(tx::commit).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("6.2.7 a transaction spans several commits: each commit starts a new one")
    void shouldChainTransactions(Jms jms) throws Exception {
        Session tx = transacted(jms);
        Queue q = jms.queue();
        MessageProducer producer = tx.createProducer(q);
        producer.send(tx.createTextMessage("1"));
        tx.commit();
        producer.send(tx.createTextMessage("2"));
        tx.rollback();
        producer.send(tx.createTextMessage("3"));
        tx.commit();
        MessageConsumer consumer = jms.session().createConsumer(q);
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("1");
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("3");
        assertThat(consumer.receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("6.2.7 JMSContext SESSION_TRANSACTED: commit publishes, rollback discards")
    void shouldCommitAndRollBackAContext(Jms jms) {
        JMSContext tx = jms.context(JMSContext.SESSION_TRANSACTED);
        Queue q = jms.queue();
        tx.createProducer().send(q, "discarded");
        tx.rollback();
        tx.createProducer().send(q, "kept");
        tx.commit();
        JMSConsumer consumer = jms.context().createConsumer(q);
        assertThat(consumer.receiveBody(String.class, RECEIVE_MS)).isEqualTo("kept");
        assertThat(consumer.receiveBody(String.class, NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("6.2.7 JMSContext.commit of a non-transacted context throws IllegalStateRuntimeException")
    void shouldRefuseCommitOfANonTransactedContext(Jms jms) {
        JMSContext context = jms.context();
        assertThatThrownBy(context::commit).isInstanceOf(IllegalStateRuntimeException.class);
        assertThatThrownBy(context::rollback).isInstanceOf(IllegalStateRuntimeException.class);
    }

    @Test
    @DisplayName("6.2.7 Message.acknowledge in a transacted session is ignored: rollback still redelivers")
    void shouldIgnoreAcknowledgeInATransaction(Jms jms) throws Exception {
        Queue q = jms.queue();
        Session plain = jms.session();
        plain.createProducer(q).send(plain.createTextMessage("x"));
        Session tx = transacted(jms);
        MessageConsumer consumer = tx.createConsumer(q);
        consumer.receive(RECEIVE_MS).acknowledge();
        tx.rollback();
        assertThat(consumer.receive(RECEIVE_MS)).isNotNull();
        tx.commit();
    }
}
