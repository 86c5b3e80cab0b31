package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/**
 * Delivery delay (JMS 3.1 7.9) through a real broker's durable delay service: JMSDeliveryTime is the send time plus
 * the delay; a delayed message is invisible to every consumer until then, on queues and topics, for synchronous and
 * asynchronous sends; equally delayed messages of one session keep their order; a delayed message survives a broker
 * restart and arrives once.
 */
@Timeout(60)
class DeliveryDelayIntegrationTest {

    private static final long DELAY_MS = 1500;

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

    private static String text(Message m) throws JMSException {
        assertThat(m).isNotNull();
        return ((TextMessage) m).getText();
    }

    /** Receives with {@code receiveNoWait}; when the whole call ran before {@code dueMs}, nothing may come. */
    private static void assertNothingBefore(MessageConsumer consumer, long dueMs) throws JMSException {
        Message m = consumer.receiveNoWait();
        long after = System.currentTimeMillis();
        if (after < dueMs) {
            assertThat(m).as("receiveNoWait before the delivery time").isNull();
        }
    }

    @Test
    void shouldHideADelayedQueueMessageUntilItsDeliveryTimeAndDeliverOthersMeanwhile() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue("q.delayed");
            MessageConsumer consumer = s.createConsumer(q);
            c.start();
            MessageProducer producer = s.createProducer(q);
            assertThat(producer.getDeliveryDelay()).isZero();

            producer.setDeliveryDelay(DELAY_MS);
            List<TextMessage> delayed = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                TextMessage m = s.createTextMessage("late-" + i);
                producer.send(m);
                delayed.add(m);
            }
            long due = delayed.get(0).getJMSDeliveryTime();
            assertThat(due).isEqualTo(delayed.get(0).getJMSTimestamp() + DELAY_MS);
            producer.setDeliveryDelay(0);
            TextMessage now = s.createTextMessage("now");
            producer.send(now);
            assertThat(now.getJMSDeliveryTime()).isEqualTo(now.getJMSTimestamp());

            Message first = consumer.receive(10_000);
            long firstAt = System.currentTimeMillis();
            assertThat(text(first)).as("the undelayed message, sent last, comes first").isEqualTo("now");
            if (firstAt < due) {
                assertNothingBefore(consumer, due);
            }
            List<String> late = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Message m = consumer.receive(10_000);
                long at = System.currentTimeMillis();
                late.add(text(m));
                assertThat(at).as("received at, not before JMSDeliveryTime").isGreaterThanOrEqualTo(
                        m.getJMSDeliveryTime());
                assertThat(m.getJMSDeliveryTime()).isEqualTo(delayed.get(i).getJMSDeliveryTime());
                assertThat(m.getLongProperty("JMS_Millrace_DelayDeliveredTime"))
                        .isGreaterThanOrEqualTo(m.getJMSDeliveryTime());
            }
            assertThat(late).as("equally delayed messages keep their send order")
                    .containsExactly("late-0", "late-1", "late-2");
            assertThat(consumer.receive(300)).as("each delayed message arrives once").isNull();
        }
    }

    @Test
    void shouldHideADelayedTopicMessageSentAsynchronouslyThroughJmsProducer() throws Exception {
        try (JMSContext context = broker.factory().createContext()) {
            Topic topic = context.createTopic("t.delayed");
            var consumer = context.createConsumer(topic);
            CompletableFuture<Message> sent = new CompletableFuture<>();
            TextMessage message = context.createTextMessage("later");
            context.createProducer().setDeliveryDelay(DELAY_MS).setAsync(new CompletionListener() {
                @Override
                public void onCompletion(Message m) {
                    sent.complete(m);
                }

                @Override
                public void onException(Message m, Exception e) {
                    sent.completeExceptionally(e);
                }
            }).send(topic, message);
            long due = sent.get(10, TimeUnit.SECONDS).getJMSDeliveryTime();
            assertThat(due).isEqualTo(message.getJMSTimestamp() + DELAY_MS);

            Message early = consumer.receiveNoWait();
            if (System.currentTimeMillis() < due) {
                assertThat(early).as("receiveNoWait before the delivery time").isNull();
            }
            Message m = consumer.receive(10_000);
            long at = System.currentTimeMillis();
            assertThat(text(m)).isEqualTo("later");
            assertThat(at).isGreaterThanOrEqualTo(due);
            assertThat(m.getJMSDeliveryTime()).isEqualTo(due);
        }
    }

    /**
     * The consumer's own check (clock skew between sender and consumer, or a record written with a future
     * {@code jms.delivery.time} by other means): a Kafka producer writes such a record straight to the queue, past the
     * broker's delay service, and neither receive nor a listener gets it before its JMSDeliveryTime.
     */
    @Test
    void shouldHoldBackARecordWhoseDeliveryTimeIsAheadOfTheConsumersClock() throws Exception {
        try (Connection c = broker.factory().createConnection();
             KafkaProducer<byte[], byte[]> kafka = new KafkaProducer<>(Map.of(
                     ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()), new ByteArraySerializer(),
                     new ByteArraySerializer())) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue received = s.createQueue("q.future-receive");
            Queue listened = s.createQueue("q.future-listener");
            MessageConsumer consumer = s.createConsumer(received);
            Session listenerSession = c.createSession(Session.AUTO_ACKNOWLEDGE);
            CompletableFuture<Long> listenerGotAt = new CompletableFuture<>();
            listenerSession.createConsumer(listened).setMessageListener(
                    m -> listenerGotAt.complete(System.currentTimeMillis()));
            c.start();
            long due = System.currentTimeMillis() + DELAY_MS;
            for (String queue : List.of("q.future-receive", "q.future-listener")) {
                kafka.send(new ProducerRecord<byte[], byte[]>(queue, null, null,
                        "early".getBytes(StandardCharsets.UTF_8), List.<Header>of(new RecordHeader("jms.body.type", "text".getBytes(StandardCharsets.UTF_8)),
                                new RecordHeader("jms.delivery.time",
                                        ByteBuffer.allocate(8).putLong(due).array())))).get();
            }

            Message early = consumer.receive(200);
            if (System.currentTimeMillis() < due) {
                assertThat(early).as("receive(200) before the delivery time").isNull();
            }
            // generous: what is checked is "not before its time". Twice, under a full suite on 2 cores, nothing came
            // within 10 s; suspected, not shown: the queues' topics appear only with the Kafka producer's first send,
            // after the consumers subscribed, and the share group assigns a new topic at a heartbeat (5 s)
            Message m = consumer.receive(30_000);
            long at = System.currentTimeMillis();
            assertThat(text(m)).isEqualTo("early");
            assertThat(m.getJMSDeliveryTime()).isEqualTo(due);
            assertThat(at).isGreaterThanOrEqualTo(due);
            assertThat(listenerGotAt.get(30, TimeUnit.SECONDS)).as("listener called at").isGreaterThanOrEqualTo(due);
        }
    }

    @Test
    void shouldRefuseANegativeDelay() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            MessageProducer producer = c.createSession(Session.AUTO_ACKNOWLEDGE).createProducer(null);
            assertThatThrownBy(() -> producer.setDeliveryDelay(-1)).isInstanceOf(JMSException.class)
                    .hasMessageContaining("must not be negative");
        }
    }

    @Test
    void shouldDeliverADelayedMessageOnceAfterABrokerRestart(@TempDir Path restartDir) throws Exception {
        Map<String, String> settings = Map.of("controller.port", String.valueOf(TestBroker.freePort()));
        TestBroker first = TestBroker.start(restartDir, settings);
        long due;
        try (Connection c = first.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue("q.delayed-restart");
            MessageProducer producer = s.createProducer(q);
            producer.setDeliveryDelay(2000);
            TextMessage m = s.createTextMessage("survivor");
            producer.send(m);
            due = m.getJMSDeliveryTime();
        } finally {
            first.close();
        }
        try (TestBroker second = TestBroker.start(restartDir, settings);
             Connection c = second.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = s.createConsumer(s.createQueue("q.delayed-restart"));
            c.start();
            Message m = consumer.receive(20_000);
            long at = System.currentTimeMillis();
            assertThat(text(m)).isEqualTo("survivor");
            assertThat(at).isGreaterThanOrEqualTo(due);
            assertThat(consumer.receive(1000)).as("delivered once").isNull();
        }
    }
}
