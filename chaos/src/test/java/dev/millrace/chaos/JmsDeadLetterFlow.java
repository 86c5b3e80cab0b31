package dev.millrace.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;

import dev.millrace.jms.MillraceConnectionFactory;

/**
 * JMS dead-letter queue: every message sent to a queue is rejected (a transacted consumer rolls back each one), so
 * after {@value #MAX_DELIVERIES} deliveries the broker moves it to the queue's dead-letter queue. Promises checked:
 * every sent message reaches the DLQ, once (a copy received again there is flagged); the consumer never sees a
 * message more than {@value #MAX_DELIVERIES} times (a delivery under a lock lost with a broker counts too, so it may
 * see it fewer times).
 */
final class JmsDeadLetterFlow implements Flow {

    static final int MAX_DELIVERIES = 3;
    private static final String QUEUE = "chaos-poison";

    private final String bootstrap;
    private final long periodMs;
    private final Ledger ledger = new Ledger();
    private final Map<String, Integer> rejections = new ConcurrentHashMap<>();
    /**
     * Per message id, the JMSXDeliveryCount of each delivery to the rejecter and, once dead-lettered, where the DLQ
     * copy says it came from and with which count: the report names them for the over-delivered messages, so that a
     * count that went back (share-partition state lost) can be told from a delivery the broker never counted.
     */
    private final Map<String, List<String>> history = new ConcurrentHashMap<>();
    private final List<ConsumerLoop> loops = new ArrayList<>();
    private Connection connection;
    private Pacer pacer;

    JmsDeadLetterFlow(String bootstrap, long periodMs) {
        this.bootstrap = bootstrap;
        this.periodMs = periodMs;
    }

    @Override
    public String name() {
        return "jms dead-letter after " + MAX_DELIVERIES + " deliveries";
    }

    @Override
    public void start() throws JMSException {
        MillraceConnectionFactory factory = Jms.factory(bootstrap, Map.of("maxDeliveries",
                String.valueOf(MAX_DELIVERIES), "redeliveryDelayMs", "0"));
        connection = factory.createConnection();
        Session producerSession = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageProducer producer = producerSession.createProducer(producerSession.createQueue(QUEUE));
        producer.setDeliveryMode(DeliveryMode.PERSISTENT);
        Session rejectSession = connection.createSession(true, Session.SESSION_TRANSACTED);
        MessageConsumer rejecter = rejectSession.createConsumer(rejectSession.createQueue(QUEUE));
        loops.add(new ConsumerLoop("chaos-poison-rejecter", () -> {
            Message message = rejecter.receive(500);
            if (message != null) {
                rejections.merge(Jms.id(message), 1, Integer::sum);
                note(Jms.id(message), "dc=" + message.getIntProperty("JMSXDeliveryCount")
                        + (message.getJMSRedelivered() ? "r" : ""));
                rejectSession.rollback();
            }
        }));
        Session dlqSession = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageConsumer dlq = dlqSession.createConsumer(dlqSession.createQueue(QUEUE + ".DLQ"));
        loops.add(new ConsumerLoop("chaos-poison-dlq", () -> {
            Message message = dlq.receive(500);
            if (message != null) {
                note(Jms.id(message), "dlq p" + message.getObjectProperty("JMS_Millrace_DLQOriginalPartition") + "@"
                        + message.getObjectProperty("JMS_Millrace_DLQOriginalOffset") + " count="
                        + message.getObjectProperty("JMS_Millrace_DLQDeliveryCount"));
                ledger.delivered(Jms.id(message), Jms.flagged(message));
            }
        }));
        connection.start();
        pacer = new Pacer("chaos-poison-producer", periodMs, seq -> {
            Jms.sendTracked(producerSession, producer, QUEUE + "-" + seq, ledger);
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

    private void note(String id, String event) {
        history.computeIfAbsent(id, k -> java.util.Collections.synchronizedList(new ArrayList<>())).add(event);
    }

    /** The histories of up to five over-delivered messages. */
    private String overDeliveredHistories() {
        return rejections.entrySet().stream().filter(e -> e.getValue() > MAX_DELIVERIES).limit(5)
                .map(e -> e.getKey() + " " + history.getOrDefault(e.getKey(), List.of())).toList().toString();
    }

    private long overDelivered() {
        return rejections.values().stream().filter(n -> n > MAX_DELIVERIES).count();
    }

    @Override
    public String report() {
        return ledger.summary() + " deliveriesSeen=" + rejections.values().stream().mapToInt(Integer::intValue).sum()
                + " overDelivered=" + overDelivered() + (overDelivered() > 0 ? " " + overDeliveredHistories() : "")
                + " lastError=" + loops.get(0).lastError();
    }

    @Override
    public List<String> violations() {
        List<String> violations = new ArrayList<>();
        if (ledger.lost() > 0) {
            violations.add(ledger.lost() + " rejected messages never reached the DLQ, e.g. " + ledger.someLost()
                    + ", their deliveries " + ledger.someLost().stream().limit(5)
                    .map(id -> id + " " + history.getOrDefault(id, List.of())).toList());
        }
        if (ledger.unflaggedRedeliveries() > 0) {
            violations.add(ledger.unflaggedRedeliveries() + " messages dead-lettered more than once");
        }
        if (overDelivered() > 0) {
            violations.add(overDelivered() + " messages delivered more than " + MAX_DELIVERIES + " times");
        }
        return violations;
    }

    @Override
    public void close() throws Exception {
        if (pacer != null) {
            pacer.close();
        }
        for (ConsumerLoop loop : loops) {
            loop.close();
        }
        if (connection != null) {
            connection.close();
        }
    }
}
