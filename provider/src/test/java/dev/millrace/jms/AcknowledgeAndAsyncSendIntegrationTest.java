package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.BytesMessage;
import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.IllegalStateException;
import jakarta.jms.IllegalStateRuntimeException;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * Acknowledgement modes not covered elsewhere (DUPS_OK on queues, CLIENT_ACKNOWLEDGE with a MessageListener), the
 * rules for CompletionListeners (failure path, no close from a callback), losing the broker in the middle of sends,
 * and JMSContext autoStart.
 */
@Timeout(90)
class AcknowledgeAndAsyncSendIntegrationTest {

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

    private static void send(Session session, Queue queue, String... texts) throws JMSException {
        MessageProducer producer = session.createProducer(queue);
        for (String text : texts) {
            producer.send(session.createTextMessage(text));
        }
    }

    @Test
    void shouldAcknowledgeEveryDeliveredMessageWhenDupsOkOnAQueue() throws Exception {
        try (Connection first = broker.factory().createConnection()) {
            Session s = first.createSession(Session.DUPS_OK_ACKNOWLEDGE);
            Queue q = s.createQueue("q.dups-ok");
            send(s, q, "a", "b", "c", "d", "e");
            MessageConsumer consumer = s.createConsumer(q);
            first.start();
            List<String> got = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                Message m = consumer.receive(10_000);
                got.add(((TextMessage) m).getText());
                assertThat(m.getJMSRedelivered()).isFalse();
            }
            assertThat(got).containsExactly("a", "b", "c", "d", "e");
        }
        try (Connection second = broker.factory().createConnection()) {
            Session s = second.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = s.createConsumer(s.createQueue("q.dups-ok"));
            second.start();
            assertThat(consumer.receive(1500)).as("all five were acknowledged").isNull();
        }
    }

    /** Acknowledgements go to the broker after receive returns; closing must send those still pending first. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {Session.AUTO_ACKNOWLEDGE, Session.DUPS_OK_ACKNOWLEDGE,
            Session.AUTO_ACKNOWLEDGE, Session.DUPS_OK_ACKNOWLEDGE, Session.AUTO_ACKNOWLEDGE,
            Session.DUPS_OK_ACKNOWLEDGE})
    void shouldHaveSentEveryAcknowledgementWhenAConsumerClosesRightAfterReceiving(int mode) throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(mode);
            Queue q = s.createQueue("q.close-after-receive." + java.util.UUID.randomUUID());
            send(s, q, "m0", "m1", "m2");
            MessageConsumer consumer = s.createConsumer(q);
            c.start();
            for (int i = 0; i < 3; i++) {
                assertThat(consumer.receive(10_000)).isNotNull();
            }
            consumer.close();
            assertThat(s.createConsumer(q).receive(500)).as("acknowledged before close").isNull();
        }
    }

    @Test
    void shouldAcknowledgeUpToTheCurrentMessageFromAClientAcknowledgeListener() throws Exception {
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch four = new CountDownLatch(4);
        try (Connection first = broker.factory().createConnection()) {
            Session s = first.createSession(Session.CLIENT_ACKNOWLEDGE);
            Queue q = s.createQueue("q.client-ack-listener");
            send(s, q, "m0", "m1", "m2", "m3");
            s.createConsumer(q).setMessageListener(m -> {
                try {
                    String text = ((TextMessage) m).getText();
                    seen.add(text);
                    if (text.equals("m1")) {
                        m.acknowledge();
                    }
                } catch (JMSException | RuntimeException e) {
                    failures.add(e);
                }
                four.countDown();
            });
            first.start();
            assertThat(four.await(20, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(failures).isEmpty();
        assertThat(seen).containsExactly("m0", "m1", "m2", "m3");
        try (Connection second = broker.factory().createConnection()) {
            Session s = second.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = s.createConsumer(s.createQueue("q.client-ack-listener"));
            second.start();
            List<String> again = new ArrayList<>();
            Message m;
            while ((m = consumer.receive(2000)) != null) {
                again.add(((TextMessage) m).getText());
                assertThat(m.getJMSRedelivered()).isTrue();
                assertThat(m.getIntProperty("JMSXDeliveryCount")).isGreaterThanOrEqualTo(2);
            }
            assertThat(again).containsExactlyInAnyOrder("m2", "m3");
        }
    }

    @Test
    void shouldCallOnExceptionOnTheSessionThreadWhenAnAsyncSendFails() throws Exception {
        MillraceConnectionFactory f = broker.factory();
        try (Connection c = f.createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = s.createProducer(s.createQueue("q.async-failure"));
            BytesMessage tooLarge = s.createBytesMessage();
            tooLarge.writeBytes(new byte[2 * 1024 * 1024]); // beyond the producer's largest request
            BlockingQueue<Object[]> outcome = new ArrayBlockingQueue<>(2);
            producer.send(tooLarge, new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                    outcome.add(new Object[] {"completed", message, Thread.currentThread()});
                }

                @Override
                public void onException(Message message, Exception exception) {
                    outcome.add(new Object[] {exception, message, Thread.currentThread()});
                }
            });
            Object[] result = outcome.poll(20, TimeUnit.SECONDS);
            assertThat(result).isNotNull();
            assertThat(result[0]).isInstanceOf(JMSException.class);
            assertThat(result[1]).isSameAs(tooLarge);
            assertThat(result[2]).isNotSameAs(Thread.currentThread());
            assertThatThrownBy(() -> producer.send(tooLarge)).isInstanceOf(JMSException.class);
            TextMessage fine = s.createTextMessage("still usable");
            producer.send(fine);
        }
    }

    @Test
    void shouldRefuseClosingFromACompletionListener() throws Exception {
        List<Throwable> thrown = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch called = new CountDownLatch(1);
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = s.createProducer(s.createQueue("q.callback-rules"));
            producer.send(s.createTextMessage("x"), new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                    for (ThrowingRunnable call : List.<ThrowingRunnable>of(c::close, s::close, producer::close)) {
                        try {
                            call.run();
                            thrown.add(null);
                        } catch (Exception e) {
                            thrown.add(e);
                        }
                    }
                    called.countDown();
                }

                @Override
                public void onException(Message message, Exception exception) {
                    called.countDown();
                }
            });
            assertThat(called.await(20, TimeUnit.SECONDS)).isTrue();
            assertThat(thrown).hasSize(3).allSatisfy(t -> assertThat(t).isInstanceOf(IllegalStateException.class));
            producer.send(s.createTextMessage("the session still works"));
        }
        try (JMSContext context = broker.factory().createContext()) {
            List<Throwable> fromContext = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch done = new CountDownLatch(1);
            context.createProducer().setAsync(new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                    try {
                        context.close();
                    } catch (RuntimeException e) {
                        fromContext.add(e);
                    }
                    done.countDown();
                }

                @Override
                public void onException(Message message, Exception exception) {
                    done.countDown();
                }
            }).send(context.createQueue("q.callback-rules"), "y");
            assertThat(done.await(20, TimeUnit.SECONDS)).isTrue();
            assertThat(fromContext).singleElement().isInstanceOf(IllegalStateRuntimeException.class);
        }
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void shouldFailSendsWithinTheTimeoutAndCallTheExceptionListenerWhenTheBrokerIsLostMidway(@TempDir Path ownDir)
            throws Exception {
        TestBroker own = TestBroker.start(ownDir);
        MillraceConnectionFactory f = own.factory();
        f.setRequestTimeoutMs(2000);
        f.setFailoverTimeoutMs(0); // no failover: sends fail after the request timeout (FailoverIntegrationTest: with)
        f.setConnectionCheckIntervalMs(100);
        BlockingQueue<JMSException> lost = new ArrayBlockingQueue<>(10);
        try (Connection c = f.createConnection()) {
            c.setExceptionListener(lost::add);
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = s.createProducer(s.createQueue("q.broker-loss"));
            producer.send(s.createTextMessage("before"));
            own.close();
            long start = System.nanoTime();
            assertThatThrownBy(() -> producer.send(s.createTextMessage("during"))).isInstanceOf(JMSException.class);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2000 + 1500);
            BlockingQueue<Exception> asyncOutcome = new ArrayBlockingQueue<>(1);
            start = System.nanoTime();
            producer.send(s.createTextMessage("async during"), new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                }

                @Override
                public void onException(Message message, Exception exception) {
                    asyncOutcome.add(exception);
                }
            });
            assertThat(asyncOutcome.poll(10, TimeUnit.SECONDS)).isInstanceOf(JMSException.class);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2000 + 1500);
            assertThat(lost.poll(10, TimeUnit.SECONDS)).isNotNull();
        }
    }

    @Test
    void shouldNotDeliverBeforeStartWhenAutoStartIsOff() throws Exception {
        try (JMSContext context = broker.factory().createContext()) {
            context.setAutoStart(false);
            Queue q = context.createQueue("q.auto-start");
            JMSConsumer consumer = context.createConsumer(q);
            context.createProducer().send(q, "waiting for start");
            assertThat(consumer.receive(1000)).isNull();
            context.start();
            assertThat(consumer.receiveBody(String.class, 10_000)).isEqualTo("waiting for start");
        }
    }
}
