package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.IllegalStateException;
import jakarta.jms.Queue;
import jakarta.jms.QueueConnection;
import jakarta.jms.QueueSender;
import jakarta.jms.QueueSession;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;
import jakarta.jms.TopicConnection;
import jakarta.jms.TopicSession;

/**
 * The QueueSession and TopicSession javadoc: a QueueSession must throw IllegalStateException from the
 * publish/subscribe methods it inherits from Session, a TopicSession from the point-to-point ones; a plain Session
 * allows both domains.
 */
@Timeout(60)
class DomainSessionIntegrationTest {

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

    private static void assertRefused(ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOf(IllegalStateException.class);
    }

    /** QueueSession javadoc: the publish/subscribe methods throw IllegalStateException; the queue methods work. */
    @Test
    void shouldRefuseTopicMethodsOnAQueueSession() throws Exception {
        try (QueueConnection c = broker.factory().createQueueConnection()) {
            Topic topic = c.createSession().createTopic("domain.topic");
            QueueSession s = c.createQueueSession(false, Session.AUTO_ACKNOWLEDGE);

            assertRefused(() -> s.createTopic("domain.topic"));
            assertRefused(s::createTemporaryTopic);
            assertRefused(() -> s.createSharedConsumer(topic, "shared"));
            assertRefused(() -> s.createSharedConsumer(topic, "shared", "a = 1"));
            assertRefused(() -> s.createSharedDurableConsumer(topic, "sd"));
            assertRefused(() -> s.createSharedDurableConsumer(topic, "sd", "a = 1"));
            assertRefused(() -> s.createDurableSubscriber(topic, "d"));
            assertRefused(() -> s.createDurableSubscriber(topic, "d", null, false));
            assertRefused(() -> s.createDurableConsumer(topic, "d"));
            assertRefused(() -> s.createDurableConsumer(topic, "d", null, false));
            assertRefused(() -> s.unsubscribe("d"));
            assertRefused(() -> ((TopicSession) s).createSubscriber(topic));
            assertRefused(() -> ((TopicSession) s).createSubscriber(topic, null, false));
            assertRefused(() -> ((TopicSession) s).createPublisher(topic));

            Queue queue = s.createQueue("domain.queue");
            QueueSender sender = s.createSender(queue);
            sender.send(s.createTextMessage("hello"));
            assertThat(s.createBrowser(queue).getEnumeration().hasMoreElements()).isTrue();
            assertThat(s.createTemporaryQueue()).isNotNull();
            c.start();
            TextMessage got = (TextMessage) s.createReceiver(queue).receive(10_000);
            assertThat(got.getText()).isEqualTo("hello");
        }
    }

    /** TopicSession javadoc: the point-to-point methods throw IllegalStateException; the topic methods work. */
    @Test
    void shouldRefuseQueueMethodsOnATopicSession() throws Exception {
        try (TopicConnection c = broker.factory().createTopicConnection()) {
            Queue queue = c.createSession().createQueue("domain.queue2");
            TopicSession s = c.createTopicSession(false, Session.AUTO_ACKNOWLEDGE);

            assertRefused(() -> s.createQueue("domain.queue2"));
            assertRefused(s::createTemporaryQueue);
            assertRefused(() -> s.createBrowser(queue));
            assertRefused(() -> s.createBrowser(queue, "a = 1"));
            assertRefused(() -> ((QueueSession) s).createReceiver(queue));
            assertRefused(() -> ((QueueSession) s).createReceiver(queue, "a = 1"));
            assertRefused(() -> ((QueueSession) s).createSender(queue));

            Topic topic = s.createTopic("domain.topic2");
            c.start();
            var subscriber = s.createSubscriber(topic);
            s.createPublisher(topic).publish(s.createTextMessage("news"));
            assertThat(((TextMessage) subscriber.receive(10_000)).getText()).isEqualTo("news");
            assertThat(s.createTemporaryTopic()).isNotNull();
            s.createSharedConsumer(topic, "domain.shared").close();
        }
    }

    /** A transacted QueueSession keeps the same rules. */
    @Test
    void shouldRefuseTopicMethodsOnATransactedQueueSession() throws Exception {
        try (QueueConnection c = broker.factory().createQueueConnection()) {
            QueueSession s = c.createQueueSession(true, Session.SESSION_TRANSACTED);
            assertThat(s.getTransacted()).isTrue();
            assertRefused(() -> s.createTopic("domain.topic3"));
        }
    }

    /** Session javadoc: a session from Connection.createSession serves both domains. */
    @Test
    void shouldAllowBothDomainsOnAPlainSession() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue queue = s.createQueue("domain.queue4");
            Topic topic = s.createTopic("domain.topic4");
            s.createBrowser(queue).close();
            s.createTemporaryQueue();
            s.createTemporaryTopic();
            s.createSharedConsumer(topic, "domain.shared4").close();
            ((QueueSession) s).createReceiver(queue).close();
            ((TopicSession) s).createSubscriber(topic).close();
        }
    }

    /**
     * Session.setMessageListener javadoc: an optional facility for application servers, not supported here; clearing
     * it must still work, since session pools (pooled-jms) clear it on every return of a session to the pool.
     */
    @Test
    void shouldAllowClearingTheSessionMessageListenerButNotSettingOne() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession();
            s.setMessageListener(null);
            assertThat(s.getMessageListener()).isNull();
            assertThatThrownBy(() -> s.setMessageListener(m -> { })).isInstanceOf(jakarta.jms.JMSException.class)
                    .hasMessageContaining("not supported");
        }
    }
}
