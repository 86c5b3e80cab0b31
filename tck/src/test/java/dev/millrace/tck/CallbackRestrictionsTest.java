package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.NOTHING_MS;
import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.IllegalStateException;
import jakarta.jms.IllegalStateRuntimeException;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * What MessageListener and CompletionListener callbacks may and may not call on their own objects. Each test records
 * what the call did inside the callback ({@code null}: it returned normally) and checks it on the test thread.
 */
@TckTest
@Timeout(30)
@DisplayName("Callback restrictions (MessageListener, CompletionListener)")
class CallbackRestrictionsTest {

    /** An action run inside a callback. */
    private interface Action {
        void run() throws Exception;
    }

    /** Runs {@code action} inside onMessage of a listener on a queue of its own; returns what it threw, or null. */
    private static Throwable insideOnMessage(Jms jms, Session s, Action action) throws Exception {
        Queue q = jms.queue();
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        s.createConsumer(q).setMessageListener(m -> outcome.complete(attempt(action)));
        Session sender = jms.session();
        sender.createProducer(q).send(sender.createTextMessage("trigger"));
        return outcome.get(RECEIVE_MS, TimeUnit.MILLISECONDS);
    }

    /** Runs {@code action} inside onCompletion of an async send; returns what it threw, or null. */
    private static Throwable insideOnCompletion(MessageProducer producer, Message m, Action action) throws Exception {
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        producer.send(m, new CompletionListener() {
            @Override
            public void onCompletion(Message message) {
                outcome.complete(attempt(action));
            }

            @Override
            public void onException(Message message, Exception exception) {
                outcome.completeExceptionally(exception);
            }
        });
        return outcome.get(RECEIVE_MS, TimeUnit.MILLISECONDS);
    }

    private static Throwable attempt(Action action) {
        try {
            action.run();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    @Test
    @DisplayName("MessageListener: closing its own Session throws IllegalStateException")
    void shouldRefuseClosingTheOwnSessionInOnMessage(Jms jms) throws Exception {
        Session s = jms.session();
        assertThat(insideOnMessage(jms, s, s::close)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("MessageListener: closing its own Connection throws IllegalStateException")
    void shouldRefuseClosingTheOwnConnectionInOnMessage(Jms jms) throws Exception {
        Connection c = jms.startedConnection();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        assertThat(insideOnMessage(jms, s, c::close)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("MessageListener: stopping its own Connection throws IllegalStateException")
    void shouldRefuseStoppingTheOwnConnectionInOnMessage(Jms jms) throws Exception {
        Connection c = jms.startedConnection();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        assertThat(insideOnMessage(jms, s, c::stop)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("MessageListener: closing its own JMSContext throws IllegalStateRuntimeException")
    void shouldRefuseClosingTheOwnContextInOnMessage(Jms jms) throws Exception {
        JMSContext context = jms.context();
        Queue q = jms.queue();
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        context.createConsumer(q).setMessageListener(m -> outcome.complete(attempt(context::close)));
        jms.context().createProducer().send(q, "trigger");
        assertThat(outcome.get(RECEIVE_MS, TimeUnit.MILLISECONDS)).isInstanceOf(IllegalStateRuntimeException.class);
    }

    @Test
    @DisplayName("MessageListener: stopping its own JMSContext throws IllegalStateRuntimeException")
    void shouldRefuseStoppingTheOwnContextInOnMessage(Jms jms) throws Exception {
        JMSContext context = jms.context();
        Queue q = jms.queue();
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        context.createConsumer(q).setMessageListener(m -> outcome.complete(attempt(context::stop)));
        jms.context().createProducer().send(q, "trigger");
        assertThat(outcome.get(RECEIVE_MS, TimeUnit.MILLISECONDS)).isInstanceOf(IllegalStateRuntimeException.class);
    }

    @Test
    @DisplayName("MessageListener: closing its own MessageConsumer is allowed; its listener gets nothing more")
    void shouldAllowClosingTheOwnConsumerInOnMessage(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        List<String> seen = new CopyOnWriteArrayList<>();
        MessageConsumer consumer = s.createConsumer(q);
        consumer.setMessageListener(m -> {
            try {
                seen.add(((TextMessage) m).getText());
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            outcome.complete(attempt(consumer::close));
        });
        Session sender = jms.session();
        MessageProducer producer = sender.createProducer(q);
        producer.send(sender.createTextMessage("first"));
        assertThat(outcome.get(RECEIVE_MS, TimeUnit.MILLISECONDS)).isNull();
        producer.send(sender.createTextMessage("second"));
        // "second" goes to the next consumer (before or after "first", which both brokers redeliver: the spec leaves
        // the acknowledgement of the message whose listener closed its consumer open)
        MessageConsumer next = jms.session().createConsumer(q);
        List<String> later = new ArrayList<>();
        for (int i = 0; i < 2 && !later.contains("second"); i++) {
            Message m = next.receive(RECEIVE_MS);
            assertThat(m).isNotNull();
            later.add(((TextMessage) m).getText());
        }
        assertThat(later).contains("second");
        assertThat(seen).containsExactly("first");
    }

    @Test
    @DisplayName("MessageListener: sending a reply with its own session is allowed")
    void shouldAllowSendingInOnMessage(Jms jms) throws Exception {
        Session s = jms.session();
        Queue replies = jms.queue();
        MessageProducer producer = s.createProducer(replies);
        assertThat(insideOnMessage(jms, s, () -> producer.send(s.createTextMessage("reply")))).isNull();
        assertThat(((TextMessage) jms.session().createConsumer(replies).receive(RECEIVE_MS)).getText())
                .isEqualTo("reply");
    }

    @Test
    @DisplayName("MessageListener: commit of its own transacted session is allowed and consumes the message")
    void shouldAllowCommitInOnMessage(Jms jms) throws Exception {
        Session s = jms.startedConnection().createSession(true, Session.SESSION_TRANSACTED);
        Queue q = jms.queue();
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        MessageConsumer consumer = s.createConsumer(q);
        consumer.setMessageListener(m -> outcome.complete(attempt(s::commit)));
        Session sender = jms.session();
        sender.createProducer(q).send(sender.createTextMessage("x"));
        assertThat(outcome.get(RECEIVE_MS, TimeUnit.MILLISECONDS)).isNull();
        consumer.close();
        assertThat(jms.session().createConsumer(q).receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("CompletionListener: closing its own MessageProducer throws IllegalStateException")
    void shouldRefuseClosingTheOwnProducerInOnCompletion(Jms jms) throws Exception {
        Session s = jms.session();
        MessageProducer producer = s.createProducer(jms.queue());
        assertThat(insideOnCompletion(producer, s.createTextMessage("x"), producer::close))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("CompletionListener: closing its own Session throws IllegalStateException")
    void shouldRefuseClosingTheOwnSessionInOnCompletion(Jms jms) throws Exception {
        Session s = jms.session();
        MessageProducer producer = s.createProducer(jms.queue());
        assertThat(insideOnCompletion(producer, s.createTextMessage("x"), s::close))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("CompletionListener: closing its own Connection throws IllegalStateException")
    void shouldRefuseClosingTheOwnConnectionInOnCompletion(Jms jms) throws Exception {
        Connection c = jms.connection();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageProducer producer = s.createProducer(jms.queue());
        assertThat(insideOnCompletion(producer, s.createTextMessage("x"), c::close))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("CompletionListener: commit or rollback of its own transacted session throws IllegalStateException")
    void shouldRefuseCommitInOnCompletion(Jms jms) throws Exception {
        Session s = jms.connection().createSession(true, Session.SESSION_TRANSACTED);
        MessageProducer producer = s.createProducer(jms.queue());
        assertThat(insideOnCompletion(producer, s.createTextMessage("x"), s::commit))
                .isInstanceOf(IllegalStateException.class);
        assertThat(insideOnCompletion(producer, s.createTextMessage("y"), s::rollback))
                .isInstanceOf(IllegalStateException.class);
        s.rollback();
    }

    @Test
    @DisplayName("CompletionListener: closing its own JMSContext throws IllegalStateRuntimeException")
    void shouldRefuseClosingTheOwnContextInOnCompletion(Jms jms) throws Exception {
        JMSContext context = jms.context();
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        context.createProducer().setAsync(new CompletionListener() {
            @Override
            public void onCompletion(Message message) {
                outcome.complete(attempt(context::close));
            }

            @Override
            public void onException(Message message, Exception exception) {
                outcome.completeExceptionally(exception);
            }
        }).send(jms.queue(), "x");
        assertThat(outcome.get(RECEIVE_MS, TimeUnit.MILLISECONDS)).isInstanceOf(IllegalStateRuntimeException.class);
    }

    @Test
    @DisplayName("CompletionListener: stopping its own JMSContext is allowed")
    void shouldAllowStoppingTheOwnContextInOnCompletion(Jms jms) throws Exception {
        JMSContext context = jms.context();
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        context.createProducer().setAsync(new CompletionListener() {
            @Override
            public void onCompletion(Message message) {
                outcome.complete(attempt(context::stop));
            }

            @Override
            public void onException(Message message, Exception exception) {
                outcome.completeExceptionally(exception);
            }
        }).send(jms.queue(), "x");
        assertThat(outcome.get(RECEIVE_MS, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    @DisplayName("CompletionListener: sending another message with the same producer is allowed")
    void shouldAllowSendingInOnCompletion(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        TextMessage second = s.createTextMessage("second");
        assertThat(insideOnCompletion(producer, s.createTextMessage("first"), () -> producer.send(second))).isNull();
        MessageConsumer consumer = jms.session().createConsumer(q);
        assertThat(consumer.receive(RECEIVE_MS)).isNotNull();
        assertThat(consumer.receive(RECEIVE_MS)).isNotNull();
    }
}
