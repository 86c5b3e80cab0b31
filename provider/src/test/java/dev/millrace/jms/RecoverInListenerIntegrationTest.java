package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.Destination;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * JMS 3.1 section 6.2.10 and the Session.recover javadoc: recover() called in the MessageListener of an
 * AUTO_ACKNOWLEDGE or DUPS_OK_ACKNOWLEDGE session delivers the current message again (JMSRedelivered set) instead of
 * acknowledging it when onMessage returns; on queues (released to the broker) and topics (rewound by the subscriber).
 */
@Timeout(60)
class RecoverInListenerIntegrationTest {

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

    /** What the listener saw on the delivery after the one it recovered. */
    private record Redelivery(String text, boolean redelivered, int deliveryCount) {
    }

    /**
     * A listener that recovers its session on the first delivery of a message and reports the next delivery; a
     * failure inside it completes {@code result} exceptionally.
     */
    private static void recoverOnce(MessageConsumer consumer, Runnable recover, CompletableFuture<Redelivery> result)
            throws JMSException {
        consumer.setMessageListener(m -> {
            try {
                if (!m.getJMSRedelivered()) {
                    recover.run();
                    return;
                }
                result.complete(new Redelivery(((TextMessage) m).getText(), true,
                        m.getIntProperty("JMSXDeliveryCount")));
            } catch (JMSException | RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
    }

    private static void assertRedeliveredOnce(CompletableFuture<Redelivery> result, String text) throws Exception {
        Redelivery again = result.get(20, TimeUnit.SECONDS);
        assertThat(again.text()).isEqualTo(text);
        assertThat(again.redelivered()).isTrue();
        assertThat(again.deliveryCount()).isEqualTo(2);
    }

    @Test
    void shouldRedeliverTheCurrentMessageWhenAnAutoAcknowledgeListenerRecoversOnAQueueAndATopic() throws Exception {
        for (int mode : new int[] {Session.AUTO_ACKNOWLEDGE, Session.DUPS_OK_ACKNOWLEDGE}) {
            try (Connection c = broker.factory().createConnection()) {
                Session s = c.createSession(mode);
                Session sender = c.createSession(Session.AUTO_ACKNOWLEDGE);
                for (Destination d : new Destination[] {sender.createQueue("recover.listener.q" + mode),
                        sender.createTopic("recover.listener.t" + mode)}) {
                    MessageConsumer consumer = s.createConsumer(d);
                    CompletableFuture<Redelivery> result = new CompletableFuture<>();
                    recoverOnce(consumer, () -> {
                        try {
                            s.recover();
                        } catch (JMSException e) {
                            throw new IllegalStateException(e);
                        }
                    }, result);
                    c.start();
                    sender.createProducer(d).send(sender.createTextMessage("again " + d));

                    assertRedeliveredOnce(result, "again " + d);
                    consumer.close();
                }
            }
        }
    }

    /** JMSContext.recover in its own listener: the same rule through the simplified API. */
    @Test
    void shouldRedeliverTheCurrentMessageWhenAContextsListenerRecovers() throws Exception {
        try (JMSContext context = broker.factory().createContext(JMSContext.AUTO_ACKNOWLEDGE)) {
            Queue q = context.createQueue("recover.listener.context");
            CompletableFuture<Redelivery> result = new CompletableFuture<>();
            context.createConsumer(q).setMessageListener(m -> {
                try {
                    if (!m.getJMSRedelivered()) {
                        context.recover();
                        return;
                    }
                    result.complete(new Redelivery(m.getBody(String.class), true,
                            m.getIntProperty("JMSXDeliveryCount")));
                } catch (JMSException | RuntimeException e) {
                    result.completeExceptionally(e);
                }
            });
            try (JMSContext sender = context.createContext(JMSContext.AUTO_ACKNOWLEDGE)) {
                sender.createProducer().send(q, "context");
            }

            assertRedeliveredOnce(result, "context");
        }
    }

    /** After the redelivered message is handled without recover, it is acknowledged: a new consumer gets nothing of it. */
    @Test
    void shouldAcknowledgeTheRedeliveredMessageOnceItsListenerReturns() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue("recover.listener.then.ack");
            MessageConsumer consumer = s.createConsumer(q, "kind = 'recover'");
            CompletableFuture<Redelivery> result = new CompletableFuture<>();
            recoverOnce(consumer, () -> {
                try {
                    s.recover();
                } catch (JMSException e) {
                    throw new IllegalStateException(e);
                }
            }, result);
            c.start();
            Session sender = c.createSession(Session.AUTO_ACKNOWLEDGE);
            TextMessage once = sender.createTextMessage("once");
            once.setStringProperty("kind", "recover");
            sender.createProducer(q).send(once);
            sender.createProducer(q).send(sender.createTextMessage("marker"));
            assertRedeliveredOnce(result, "once");
            consumer.close();

            MessageConsumer next = sender.createConsumer(q);
            Message m = next.receive(10_000);
            assertThat(((TextMessage) m).getText()).as("'once' was acknowledged").isEqualTo("marker");
        }
    }
}
