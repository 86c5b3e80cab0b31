package dev.millrace.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.Topic;

import dev.millrace.jms.MillraceConnectionFactory;

/**
 * JMS publish-subscribe: a persistent producer to a topic and either a durable subscriber (its subscription keeps
 * its position across failover) or two consumers of one shared durable subscription (each message to one of them).
 * Both acknowledge automatically. Promises checked: every sent message reaches the subscription; a message received
 * again is flagged.
 */
final class JmsTopicFlow implements Flow {

    /** The kind of subscription. */
    enum Kind { DURABLE, SHARED }

    private final String bootstrap;
    private final String topicName;
    private final Kind kind;
    private final long periodMs;
    private final Ledger ledger = new Ledger();
    private final List<ConsumerLoop> consumers = new ArrayList<>();
    private Connection producerConnection;
    private Connection consumerConnection;
    private Pacer pacer;

    JmsTopicFlow(String bootstrap, String topicName, Kind kind, long periodMs) {
        this.bootstrap = bootstrap;
        this.topicName = topicName;
        this.kind = kind;
        this.periodMs = periodMs;
    }

    @Override
    public String name() {
        return "jms topic, " + (kind == Kind.DURABLE ? "durable subscriber" : "shared subscription");
    }

    @Override
    public void start() throws JMSException {
        MillraceConnectionFactory factory = Jms.factory(bootstrap, Map.of());
        producerConnection = factory.createConnection();
        consumerConnection = factory.createConnection();
        if (kind == Kind.DURABLE) {
            consumerConnection.setClientID("chaos-" + topicName);
        }
        Session producerSession = producerConnection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Topic topic = producerSession.createTopic(topicName);
        MessageProducer producer = producerSession.createProducer(topic);
        producer.setDeliveryMode(DeliveryMode.PERSISTENT);
        int count = kind == Kind.DURABLE ? 1 : 2;
        for (int i = 0; i < count; i++) {
            Session session = consumerConnection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = kind == Kind.DURABLE ? session.createDurableConsumer(topic, "chaos-durable")
                    : session.createSharedDurableConsumer(topic, "chaos-shared");
            consumers.add(new ConsumerLoop("chaos-" + topicName + "-subscriber-" + i, () -> {
                Message message = consumer.receive(500);
                if (message != null) {
                    ledger.delivered(Jms.id(message), Jms.flagged(message));
                }
            }));
        }
        consumerConnection.start();
        pacer = new Pacer("chaos-" + topicName + "-producer", periodMs, seq -> {
            Jms.sendTracked(producerSession, producer, topicName + "-" + seq, ledger);
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
        return ledger.summary() + " consumerErrors=" + consumers.stream().mapToLong(ConsumerLoop::errors).sum()
                + " lastError=" + consumers.get(0).lastError();
    }

    @Override
    public List<String> violations() {
        List<String> violations = new ArrayList<>();
        if (ledger.lost() > 0) {
            violations.add(ledger.lost() + " sent messages never reached the subscription, e.g. " + ledger.someLost());
        }
        if (ledger.unflaggedRedeliveries() > 0) {
            violations.add(ledger.unflaggedRedeliveries() + " messages received again without JMSRedelivered");
        }
        return violations;
    }

    @Override
    public void close() throws Exception {
        if (pacer != null) {
            pacer.close();
        }
        for (ConsumerLoop loop : consumers) {
            loop.close();
        }
        if (consumerConnection != null) {
            consumerConnection.close();
        }
        if (producerConnection != null) {
            producerConnection.close();
        }
    }
}
