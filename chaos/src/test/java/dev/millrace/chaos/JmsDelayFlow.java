package dev.millrace.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import dev.millrace.jms.MillraceConnectionFactory;

/**
 * JMS delayed delivery: persistent messages sent with a delivery delay to a queue, received by an AUTO_ACKNOWLEDGE
 * consumer. Promises checked: every scheduled message is delivered, never before its JMSDeliveryTime (same machine,
 * same clock), and (printed) how late the latest one was; a message received again is flagged.
 */
final class JmsDelayFlow implements Flow {

    private static final String QUEUE = "chaos-delayed";

    private final String bootstrap;
    private final long periodMs;
    private final long delayMs;
    private final Ledger ledger = new Ledger();
    private final List<String> early = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final AtomicLong worstLatenessMs = new AtomicLong();
    private Connection connection;
    private ConsumerLoop consumer;
    private Pacer pacer;

    JmsDelayFlow(String bootstrap, long periodMs, long delayMs) {
        this.bootstrap = bootstrap;
        this.periodMs = periodMs;
        this.delayMs = delayMs;
    }

    @Override
    public String name() {
        return "jms delivery delay " + delayMs + " ms";
    }

    @Override
    public void start() throws JMSException {
        MillraceConnectionFactory factory = Jms.factory(bootstrap, Map.of());
        connection = factory.createConnection();
        Session producerSession = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageProducer producer = producerSession.createProducer(producerSession.createQueue(QUEUE));
        producer.setDeliveryMode(DeliveryMode.PERSISTENT);
        producer.setDeliveryDelay(delayMs);
        Session consumerSession = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageConsumer receiver = consumerSession.createConsumer(consumerSession.createQueue(QUEUE));
        consumer = new ConsumerLoop("chaos-delay-consumer", () -> {
            Message message = receiver.receive(500);
            if (message == null) {
                return;
            }
            long now = System.currentTimeMillis();
            String id = Jms.id(message);
            long due = message.getLongProperty("chaosDueMs");
            if (now < due) {
                early.add(id + " (" + (due - now) + " ms early)");
            }
            worstLatenessMs.accumulateAndGet(now - due, Math::max);
            ledger.delivered(id, Jms.flagged(message));
        });
        connection.start();
        pacer = new Pacer("chaos-delay-producer", periodMs, seq -> {
            String id = QUEUE + "-" + seq;
            TextMessage message = producerSession.createTextMessage(id);
            message.setStringProperty(Jms.ID, id);
            // the earliest the message may come: the delay counts from the send, which starts after this
            message.setLongProperty("chaosDueMs", System.currentTimeMillis() + delayMs);
            try {
                producer.send(message);
                ledger.acknowledged(id);
            } catch (JMSException | RuntimeException e) {
                ledger.sendFailed();
                throw e;
            }
        });
    }

    @Override
    public void stopSending() throws Exception {
        pacer.close();
    }

    @Override
    public boolean drained() {
        return ledger.allAcknowledgedDelivered();
    }

    @Override
    public long acknowledged() {
        return ledger.acknowledgedCount();
    }

    @Override
    public String report() {
        return ledger.summary() + " early=" + early.size() + " worstLatenessMs=" + worstLatenessMs.get()
                + " lastError=" + consumer.lastError();
    }

    @Override
    public List<String> violations() {
        List<String> violations = new ArrayList<>();
        if (ledger.lost() > 0) {
            violations.add(ledger.lost() + " delayed messages never delivered, e.g. " + ledger.someLost());
        }
        if (!early.isEmpty()) {
            violations.add(early.size() + " delayed messages delivered early, e.g. "
                    + early.subList(0, Math.min(5, early.size())));
        }
        if (ledger.unflaggedRedeliveries() > 0) {
            violations.add(ledger.unflaggedRedeliveries() + " delayed messages delivered twice without "
                    + "JMSRedelivered");
        }
        return violations;
    }

    @Override
    public void close() throws Exception {
        if (pacer != null) {
            pacer.close();
        }
        if (consumer != null) {
            consumer.close();
        }
        if (connection != null) {
            connection.close();
        }
    }
}
