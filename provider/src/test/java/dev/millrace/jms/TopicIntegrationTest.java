package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.IllegalStateException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/** Topics against a real broker: non-durable and durable subscribers, every acknowledgement mode, noLocal, async send. */
@Timeout(60)
class TopicIntegrationTest {

    @TempDir
    static Path dataDir;
    static TestBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBroker.start(dataDir);
    }

    @AfterAll
    static void stopBroker() throws Exception {
        broker.close();
    }

    private static List<String> texts(MessageConsumer consumer, int n) throws Exception {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Message m = consumer.receive(10_000);
            assertThat(m).as("message %d of %d", i + 1, n).isNotNull();
            out.add(((TextMessage) m).getText());
        }
        return out;
    }

    @Test
    void shouldDeliverInSendOrderWithDefaultHeadersWhenAutoAcknowledge() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic topic = s.createTopic("t.order");
            MessageConsumer consumer = s.createConsumer(topic);
            c.start();
            MessageProducer producer = s.createProducer(topic);
            for (int i = 0; i < 20; i++) {
                producer.send(s.createTextMessage("m" + i));
            }
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                expected.add("m" + i);
            }
            Message first = consumer.receive(10_000);
            assertThat(((TextMessage) first).getText()).isEqualTo("m0");
            assertThat(first.getJMSMessageID()).startsWith("ID:");
            assertThat(first.getJMSDeliveryMode()).isEqualTo(DeliveryMode.PERSISTENT);
            assertThat(first.getJMSPriority()).isEqualTo(4);
            assertThat(first.getJMSExpiration()).isZero();
            assertThat(first.getJMSRedelivered()).isFalse();
            assertThat(first.getIntProperty("JMSXDeliveryCount")).isEqualTo(1);
            assertThat(first.getJMSDestination()).isEqualTo(topic);
            assertThat(texts(consumer, 19)).isEqualTo(expected.subList(1, 20));
            assertThat(consumer.receiveNoWait()).isNull();
        }
    }

    @Test
    void shouldNotReadMessagesSentBeforeANonDurableSubscriberExisted() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic topic = s.createTopic("t.fromEnd");
            MessageProducer producer = s.createProducer(topic);
            producer.send(s.createTextMessage("before"));
            MessageConsumer consumer = s.createConsumer(topic);
            producer.send(s.createTextMessage("after"));
            c.start();
            assertThat(texts(consumer, 1)).containsExactly("after");
            assertThat(consumer.receive(200)).isNull();
        }
    }

    @Test
    void shouldRedeliverUnacknowledgedWithGrowingCountWhenClientAcknowledgeRecovers() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.CLIENT_ACKNOWLEDGE);
            Topic topic = s.createTopic("t.client");
            MessageConsumer consumer = s.createConsumer(topic);
            c.start();
            MessageProducer producer = s.createProducer(topic);
            producer.send(s.createTextMessage("a"));
            producer.send(s.createTextMessage("b"));
            producer.send(s.createTextMessage("c"));
            Message a = consumer.receive(10_000);
            a.acknowledge();
            assertThat(texts(consumer, 2)).containsExactly("b", "c");
            s.recover();
            Message b2 = consumer.receive(10_000);
            assertThat(((TextMessage) b2).getText()).isEqualTo("b");
            assertThat(b2.getJMSRedelivered()).isTrue();
            assertThat(b2.getIntProperty("JMSXDeliveryCount")).isEqualTo(2);
            assertThat(texts(consumer, 1)).containsExactly("c");
            s.recover();
            Message b3 = consumer.receive(10_000);
            assertThat(b3.getIntProperty("JMSXDeliveryCount")).isEqualTo(3);
            b3.acknowledge();
            assertThat(texts(consumer, 1)).containsExactly("c");
            s.recover();
            assertThat(consumer.receive(200)).as("everything was acknowledged").isNull();
        }
    }

    @Test
    void shouldResumeDurableSubscriptionAfterCloseWithMessagesSentMeanwhile() throws Exception {
        MillraceConnectionFactory f = broker.factory();
        f.setClientId("durable-client");
        Topic topic;
        try (Connection c = f.createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            topic = s.createTopic("t.durable");
            MessageConsumer sub = s.createDurableConsumer(topic, "sub1");
            c.start();
            s.createProducer(topic).send(s.createTextMessage("one"));
            assertThat(texts(sub, 1)).containsExactly("one");
            assertThatThrownBy(() -> s.createDurableConsumer(topic, "sub1"))
                    .isInstanceOf(IllegalStateException.class);
        }
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            s.createProducer(topic).send(s.createTextMessage("two"));
            s.createProducer(topic).send(s.createTextMessage("three"));
        }
        try (Connection c = f.createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer sub = s.createDurableSubscriber(topic, "sub1");
            c.start();
            assertThat(texts(sub, 2)).containsExactly("two", "three");
            sub.close();
            s.unsubscribe("sub1");
            assertThatThrownBy(() -> s.unsubscribe("sub1")).isInstanceOf(jakarta.jms.InvalidDestinationException.class);
        }
    }

    @Test
    void shouldRedeliverUnacknowledgedDurableMessagesToTheNextConnection() throws Exception {
        MillraceConnectionFactory f = broker.factory();
        f.setClientId("durable-client-ack");
        Topic topic;
        try (Connection c = f.createConnection()) {
            Session s = c.createSession(Session.CLIENT_ACKNOWLEDGE);
            topic = s.createTopic("t.durableAck");
            MessageConsumer sub = s.createDurableConsumer(topic, "sub");
            c.start();
            MessageProducer p = s.createProducer(topic);
            p.send(s.createTextMessage("x"));
            p.send(s.createTextMessage("y"));
            Message x = sub.receive(10_000);
            x.acknowledge();
            assertThat(texts(sub, 1)).containsExactly("y");
        }
        try (Connection c = f.createConnection()) {
            Session s = c.createSession(Session.DUPS_OK_ACKNOWLEDGE);
            MessageConsumer sub = s.createDurableConsumer(topic, "sub");
            c.start();
            assertThat(texts(sub, 1)).containsExactly("y");
            sub.close();
            s.unsubscribe("sub");
        }
    }

    @Test
    void shouldSkipOwnMessagesWhenNoLocal() throws Exception {
        try (Connection c = broker.factory().createConnection(); Connection other = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic topic = s.createTopic("t.noLocal");
            MessageConsumer noLocal = s.createConsumer(topic, null, true);
            MessageConsumer all = s.createConsumer(topic, null, false);
            c.start();
            s.createProducer(topic).send(s.createTextMessage("mine"));
            Session os = other.createSession(Session.AUTO_ACKNOWLEDGE);
            os.createProducer(topic).send(os.createTextMessage("theirs"));
            assertThat(texts(noLocal, 1)).containsExactly("theirs");
            assertThat(texts(all, 2)).containsExactlyInAnyOrder("mine", "theirs");
        }
    }

    @Test
    void shouldCallCompletionListenersInSendOrderOffTheSendingThread() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic topic = s.createTopic("t.async");
            MessageConsumer consumer = s.createConsumer(topic);
            c.start();
            MessageProducer producer = s.createProducer(topic);
            int n = 200;
            List<String> completed = Collections.synchronizedList(new ArrayList<>());
            Set<Thread> threads = ConcurrentHashMap.newKeySet();
            CountDownLatch done = new CountDownLatch(n);
            for (int i = 0; i < n; i++) {
                producer.send(s.createTextMessage("m" + i), new CompletionListener() {
                    @Override
                    public void onCompletion(Message message) {
                        try {
                            completed.add(((TextMessage) message).getText());
                        } catch (Exception e) {
                            completed.add("error " + e);
                        }
                        threads.add(Thread.currentThread());
                        done.countDown();
                    }

                    @Override
                    public void onException(Message message, Exception exception) {
                        completed.add("failed " + exception);
                        done.countDown();
                    }
                });
            }
            assertThat(done.await(20, TimeUnit.SECONDS)).isTrue();
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                expected.add("m" + i);
            }
            assertThat(completed).isEqualTo(expected);
            assertThat(threads).doesNotContain(Thread.currentThread()).hasSize(1);
            assertThat(texts(consumer, n)).isEqualTo(expected);
        }
    }

    @Test
    void shouldNotDeliverExpiredMessages() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic topic = s.createTopic("t.expiry");
            MessageConsumer consumer = s.createConsumer(topic);
            MessageProducer producer = s.createProducer(topic);
            producer.send(s.createTextMessage("expired"), DeliveryMode.NON_PERSISTENT, 4, 1);
            long sentAt = System.currentTimeMillis();
            while (System.currentTimeMillis() <= sentAt + 1) {
                Thread.onSpinWait();
            }
            producer.send(s.createTextMessage("live"));
            c.start();
            assertThat(texts(consumer, 1)).containsExactly("live");
        }
    }
}
