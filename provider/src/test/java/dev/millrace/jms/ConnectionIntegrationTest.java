package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionMetaData;
import jakarta.jms.IllegalStateException;
import jakarta.jms.InvalidClientIDException;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TemporaryTopic;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/** Connections, sessions and listeners against a real broker: client ids, start/stop/close, temporary destinations. */
@Timeout(60)
class ConnectionIntegrationTest {

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

    @Test
    void shouldRefuseAClientIdHeldByAnotherConnectionUntilItCloses() throws Exception {
        Connection first = broker.factory().createConnection();
        first.setClientID("unique-id");
        try (Connection second = broker.factory().createConnection()) {
            assertThatThrownBy(() -> second.setClientID("unique-id")).isInstanceOf(InvalidClientIDException.class);
        }
        assertThatThrownBy(() -> first.setClientID("other")).isInstanceOf(IllegalStateException.class);
        first.close();
        try (Connection third = broker.factory().createConnection()) {
            third.setClientID("unique-id");
            assertThat(third.getClientID()).isEqualTo("unique-id");
        }
    }

    @Test
    void shouldRefuseSetClientIdAfterTheConnectionWasUsed() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            c.createSession(Session.AUTO_ACKNOWLEDGE);
            assertThatThrownBy(() -> c.setClientID("late")).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void shouldReportProviderMetaData() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            ConnectionMetaData md = c.getMetaData();
            assertThat(md.getJMSVersion()).isEqualTo("3.1");
            assertThat(md.getJMSProviderName()).isEqualTo("Millrace");
            assertThat(Collections.list(md.getJMSXPropertyNames())).contains("JMSXDeliveryCount", "JMSXGroupID");
        }
    }

    @Test
    void shouldThrowIllegalStateOnClosedObjectsAndCloseIdempotently() throws Exception {
        Connection c = broker.factory().createConnection();
        Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
        Topic t = s.createTopic("closed.objects");
        MessageProducer p = s.createProducer(t);
        MessageConsumer consumer = s.createConsumer(t);
        c.close();
        c.close();
        assertThatThrownBy(() -> c.createSession(Session.AUTO_ACKNOWLEDGE)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> s.createTextMessage()).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> p.send(s.createTextMessage("x"))).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> consumer.receiveNoWait()).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldDeliverNothingWhileStoppedAndRunListenersOnOneThreadPerSession() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic t = s.createTopic("listeners");
            BlockingQueue<String> got = new ArrayBlockingQueue<>(100);
            BlockingQueue<Thread> threads = new ArrayBlockingQueue<>(100);
            MessageConsumer a = s.createConsumer(t);
            MessageConsumer b = s.createConsumer(t);
            a.setMessageListener(m -> {
                threads.add(Thread.currentThread());
                got.add("a");
            });
            b.setMessageListener(m -> {
                threads.add(Thread.currentThread());
                got.add("b");
            });
            s.createProducer(t).send(s.createTextMessage("1"));
            assertThat(got.poll(300, TimeUnit.MILLISECONDS)).as("stopped: nothing delivered").isNull();
            c.start();
            assertThat(List.of(got.poll(10, TimeUnit.SECONDS), got.poll(10, TimeUnit.SECONDS)))
                    .containsExactlyInAnyOrder("a", "b");
            Thread first = threads.take();
            assertThat(threads.take()).isSameAs(first).isNotSameAs(Thread.currentThread());
        }
    }

    @Test
    void shouldWaitForOnMessageInProgressWhenStoppingAndClosing() throws Exception {
        Connection c = broker.factory().createConnection();
        Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
        Topic t = s.createTopic("slow.listener");
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean finished = new AtomicBoolean();
        MessageConsumer consumer = s.createConsumer(t);
        consumer.setMessageListener(m -> {
            inside.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            finished.set(true);
        });
        c.start();
        s.createProducer(t).send(s.createTextMessage("slow"));
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        Thread closer = new Thread(() -> {
            try {
                c.close();
            } catch (JMSException e) {
                throw new RuntimeException(e);
            }
        });
        closer.start();
        closer.join(300);
        assertThat(closer.isAlive()).as("close waits for onMessage").isTrue();
        release.countDown();
        closer.join(10_000);
        assertThat(closer.isAlive()).isFalse();
        assertThat(finished).isTrue();
    }

    @Test
    void shouldRefuseStopAndCloseOfItsOwnConnectionFromAListener() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic t = s.createTopic("self.close");
            BlockingQueue<Object> outcome = new ArrayBlockingQueue<>(2);
            s.createConsumer(t).setMessageListener(m -> {
                try {
                    c.stop();
                    outcome.add("stopped");
                } catch (Exception e) {
                    outcome.add(e);
                }
            });
            c.start();
            s.createProducer(t).send(s.createTextMessage("x"));
            assertThat(outcome.poll(10, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void shouldBindTemporaryQueuesToTheirConnection() throws Exception {
        try (Connection owner = broker.factory().createConnection();
             Connection other = broker.factory().createConnection()) {
            Session s = owner.createSession(Session.AUTO_ACKNOWLEDGE);
            TemporaryQueue tq = s.createTemporaryQueue();
            Session os = other.createSession(Session.AUTO_ACKNOWLEDGE);
            os.createProducer(tq).send(os.createTextMessage("reply"));
            assertThatThrownBy(() -> os.createConsumer(tq)).isInstanceOf(InvalidDestinationException.class);
            MessageConsumer consumer = s.createConsumer(tq);
            owner.start();
            Message m = consumer.receive(10_000);
            assertThat(((TextMessage) m).getText()).isEqualTo("reply");
            assertThatThrownBy(tq::delete).isInstanceOf(IllegalStateException.class);
            consumer.close();
            tq.delete();
            TemporaryTopic tt = s.createTemporaryTopic();
            assertThat(tt.getTopicName()).isNotEqualTo(tq.getQueueName());
        }
    }

    @Test
    void shouldCallTheExceptionListenerWhenTheBrokerGoesAway(@TempDir Path ownDir) throws Exception {
        TestBroker own = TestBroker.start(ownDir);
        MillraceConnectionFactory f = own.factory();
        f.setRequestTimeoutMs(1000);
        f.setFailoverTimeoutMs(1000); // reported once the broker has stayed away for longer than this
        f.setConnectionCheckIntervalMs(100);
        BlockingQueue<JMSException> failures = new ArrayBlockingQueue<>(10);
        try (Connection c = f.createConnection()) {
            c.setExceptionListener(failures::add);
            assertThat(failures.poll(300, TimeUnit.MILLISECONDS)).isNull();
            own.close();
            assertThat(failures.poll(15, TimeUnit.SECONDS)).isNotNull();
        }
    }
}
