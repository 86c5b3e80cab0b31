package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.NOTHING_MS;
import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.Connection;
import jakarta.jms.IllegalStateException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageListener;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/** Receiving: synchronous receive, MessageListener, queue and topic semantics. */
@TckTest
@Timeout(30)
@DisplayName("8 Receiving messages: sync and async consumers")
class ConsumerTest {

    @Test
    @DisplayName("8 receive(timeout) on an empty queue returns null; receiveNoWait returns null")
    void shouldReturnNullWhenNothingArrives(Jms jms) throws Exception {
        MessageConsumer consumer = jms.session().createConsumer(jms.queue());
        assertThat(consumer.receive(NOTHING_MS)).isNull();
        assertThat(consumer.receiveNoWait()).isNull();
    }

    @Test
    @DisplayName("8 receive() blocks until a message arrives from another connection")
    void shouldBlockUntilAMessageArrives(Jms jms) throws Exception {
        Queue q = jms.queue();
        MessageConsumer consumer = jms.session().createConsumer(q);
        CompletableFuture<Message> received = CompletableFuture.supplyAsync(() -> {
            try {
                return consumer.receive();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        Session sender = jms.session();
        sender.createProducer(q).send(sender.createTextMessage("wake"));
        assertThat(((TextMessage) received.get(RECEIVE_MS, TimeUnit.MILLISECONDS)).getText()).isEqualTo("wake");
    }

    @Test
    @DisplayName("8.7 MessageListener receives every message; getMessageListener returns it")
    void shouldDeliverToAListener(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageConsumer consumer = s.createConsumer(q);
        CompletableFuture<Message> first = new CompletableFuture<>();
        MessageListener listener = first::complete;
        consumer.setMessageListener(listener);
        assertThat(consumer.getMessageListener()).isSameAs(listener);
        Session sender = jms.session();
        sender.createProducer(q).send(sender.createTextMessage("async"));
        assertThat(((TextMessage) first.get(RECEIVE_MS, TimeUnit.MILLISECONDS)).getText()).isEqualTo("async");
    }

    @Test
    @DisplayName("8.7 a listener of a stopped connection gets messages only after start()")
    void shouldNotCallAListenerOfAStoppedConnection(Jms jms) throws Exception {
        Connection c = jms.connection();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue q = jms.queue();
        s.createProducer(q).send(s.createTextMessage("x"));
        CompletableFuture<Message> got = new CompletableFuture<>();
        s.createConsumer(q).setMessageListener(got::complete);
        assertThat(got).isNotDone();
        assertThatThrownBy(() -> got.get(NOTHING_MS, TimeUnit.MILLISECONDS))
                .isInstanceOf(java.util.concurrent.TimeoutException.class);
        c.start();
        assertThat(got.get(RECEIVE_MS, TimeUnit.MILLISECONDS)).isNotNull();
    }

    @Test
    @DisplayName("8.7 a listener that throws RuntimeException in AUTO_ACKNOWLEDGE gets the message again, redelivered")
    void shouldRedeliverWhenAListenerThrows(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        AtomicInteger calls = new AtomicInteger();
        CompletableFuture<Message> second = new CompletableFuture<>();
        s.createConsumer(q).setMessageListener(m -> {
            if (calls.incrementAndGet() == 1) {
                throw new RuntimeException("listener failure on purpose");
            }
            second.complete(m);
        });
        Session sender = jms.session();
        sender.createProducer(q).send(sender.createTextMessage("again"));
        Message m = second.get(RECEIVE_MS, TimeUnit.MILLISECONDS);
        assertThat(((TextMessage) m).getText()).isEqualTo("again");
        assertThat(m.getJMSRedelivered()).isTrue();
    }

    @Test
    @DisplayName("8 a queue message goes to one of two consumers, never both")
    void shouldGiveEachQueueMessageToOneConsumer(Jms jms) throws Exception {
        Queue q = jms.queue();
        Session s1 = jms.session();
        Session s2 = jms.session();
        MessageConsumer a = s1.createConsumer(q);
        MessageConsumer b = s2.createConsumer(q);
        MessageProducer producer = s1.createProducer(q);
        for (int i = 0; i < 20; i++) {
            producer.send(s1.createTextMessage("m" + i));
        }
        Set<String> seen = new HashSet<>();
        int received = 0;
        while (received < 20) {
            Message m = a.receive(50);
            if (m == null) {
                m = b.receive(50);
            }
            if (m != null) {
                assertThat(seen.add(((TextMessage) m).getText())).as("no duplicate").isTrue();
                received++;
            }
        }
        assertThat(a.receive(NOTHING_MS)).isNull();
        assertThat(b.receiveNoWait()).isNull();
    }

    @Test
    @DisplayName("4 / 8 a queue keeps messages sent before its first consumer")
    void shouldKeepQueueMessagesForALaterConsumer(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        s.createProducer(q).send(s.createTextMessage("early"));
        assertThat(((TextMessage) jms.session().createConsumer(q).receive(RECEIVE_MS)).getText()).isEqualTo("early");
    }

    @Test
    @DisplayName("8.3.1 a non-durable topic subscriber gets only messages sent after it was created")
    void shouldNotGiveATopicSubscriberEarlierMessages(Jms jms) throws Exception {
        Session s = jms.session();
        Topic t = jms.topic();
        MessageProducer producer = s.createProducer(t);
        producer.send(s.createTextMessage("before"));
        MessageConsumer consumer = s.createConsumer(t);
        producer.send(s.createTextMessage("after"));
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("after");
        assertThat(consumer.receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("8.3.1 every subscriber of a topic gets its own copy")
    void shouldGiveEveryTopicSubscriberACopy(Jms jms) throws Exception {
        Topic t = jms.topic();
        MessageConsumer a = jms.session().createConsumer(t);
        MessageConsumer b = jms.session().createConsumer(t);
        Session s = jms.session();
        s.createProducer(t).send(s.createTextMessage("all"));
        assertThat(((TextMessage) a.receive(RECEIVE_MS)).getText()).isEqualTo("all");
        assertThat(((TextMessage) b.receive(RECEIVE_MS)).getText()).isEqualTo("all");
    }

    @Test
    @DisplayName("8 a closed consumer throws IllegalStateException from receive; close twice is ignored")
    void shouldRefuseReceiveOnAClosedConsumer(Jms jms) throws Exception {
        MessageConsumer consumer = jms.session().createConsumer(jms.queue());
        consumer.close();
        consumer.close();
        assertThatThrownBy(() -> consumer.receive(NOTHING_MS)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(consumer::receiveNoWait).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("8 a message not received by a closed queue consumer goes to the next consumer")
    void shouldHandUnreceivedMessagesToTheNextConsumer(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        producer.send(s.createTextMessage("one"));
        producer.send(s.createTextMessage("two"));
        MessageConsumer first = s.createConsumer(q);
        assertThat(((TextMessage) first.receive(RECEIVE_MS)).getText()).isEqualTo("one");
        first.close();
        MessageConsumer second = s.createConsumer(q);
        assertThat(((TextMessage) second.receive(RECEIVE_MS)).getText()).isEqualTo("two");
        assertThat(second.receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("8 a consumed AUTO_ACKNOWLEDGE message is not delivered again to a later consumer")
    void shouldNotRedeliverAConsumedMessage(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        s.createProducer(q).send(s.createTextMessage("once"));
        MessageConsumer first = s.createConsumer(q);
        assertThat(first.receive(RECEIVE_MS)).isNotNull();
        first.close();
        assertThat(jms.session().createConsumer(q).receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("8.7 setMessageListener(null) stops asynchronous delivery; receive works again")
    void shouldStopListeningWithANullListener(Jms jms) throws Exception {
        Connection c = jms.connection();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue q = jms.queue();
        MessageConsumer consumer = s.createConsumer(q);
        consumer.setMessageListener(m -> { });
        consumer.setMessageListener(null);
        assertThat(consumer.getMessageListener()).isNull();
        c.start();
        s.createProducer(q).send(s.createTextMessage("sync"));
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("sync");
    }

    @Test
    @DisplayName("8 getMessageSelector: null without a selector, the selector otherwise")
    void shouldReportTheSelector(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        assertThat(s.createConsumer(q).getMessageSelector()).isNull();
        assertThat(s.createConsumer(q, "a = 1").getMessageSelector()).isEqualTo("a = 1");
    }

    @Test
    @DisplayName("8 queue: of 10 messages, both consumers get some while neither acknowledges all")
    void shouldNotStarveTheSecondQueueConsumer(Jms jms) throws Exception {
        Queue q = jms.queue();
        MessageConsumer a = jms.session().createConsumer(q);
        MessageConsumer b = jms.session().createConsumer(q);
        Session s = jms.session();
        MessageProducer producer = s.createProducer(q);
        for (int i = 0; i < 10; i++) {
            producer.send(s.createTextMessage("m" + i));
        }
        assertThat(a.receive(RECEIVE_MS)).as("the first consumer gets some").isNotNull();
        assertThat(b.receive(RECEIVE_MS)).as("the second consumer gets some").isNotNull();
    }

    @Test
    @DisplayName("8 queue: a consumer created after another one took its prefetch still gets the remaining messages")
    void shouldGiveALaterConsumerTheMessagesBeyondTheFirstOnesPrefetch(Jms jms) throws Exception {
        Queue q = jms.queue();
        Session s = jms.session();
        MessageProducer producer = s.createProducer(q);
        for (int i = 0; i < 100; i++) {
            producer.send(s.createTextMessage("m" + i));
        }
        MessageConsumer a = jms.session().createConsumer(q);
        assertThat(a.receive(RECEIVE_MS)).as("the first consumer gets some").isNotNull();
        MessageConsumer b = jms.session().createConsumer(q);
        assertThat(b.receive(RECEIVE_MS)).as("the second consumer gets some of the other 99").isNotNull();
    }

    @Test
    @DisplayName("8 queue: two consumers of one session both get some of 10 messages")
    void shouldNotStarveTheSecondQueueConsumerOfASession(Jms jms) throws Exception {
        Queue q = jms.queue();
        Session s = jms.session();
        MessageConsumer a = s.createConsumer(q);
        MessageConsumer b = s.createConsumer(q);
        Session sender = jms.session();
        MessageProducer producer = sender.createProducer(q);
        for (int i = 0; i < 10; i++) {
            producer.send(sender.createTextMessage("m" + i));
        }
        assertThat(a.receive(RECEIVE_MS)).as("the first consumer gets some").isNotNull();
        assertThat(b.receive(RECEIVE_MS)).as("the second consumer gets some").isNotNull();
    }
}
