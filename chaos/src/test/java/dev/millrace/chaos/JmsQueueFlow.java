package dev.millrace.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.TransactionRolledBackException;

import dev.millrace.jms.MillraceConnectionFactory;

/**
 * JMS point-to-point: a persistent producer (synchronous or asynchronous sends) and a queue consumer in one
 * acknowledgement mode. Promises checked (provider/README.md, "Failover"): a message whose {@code send()} returned or
 * whose CompletionListener reported success is delivered; a message delivered again is flagged (JMSRedelivered,
 * JMSXDeliveryCount above one); after an acknowledge() or commit() that returned, a message never comes again.
 * Optionally the consumer has a selector that takes every other message, and a second consumer takes the rest: each
 * checks it got only its own kind.
 */
final class JmsQueueFlow implements Flow {

    /** How the consumer acknowledges. */
    enum Mode { AUTO, CLIENT, TRANSACTED }

    private final String bootstrap;
    private final String queueName;
    private final Mode mode;
    private final boolean asyncSend;
    private final boolean selector;
    private final long periodMs;
    private final Ledger ledger = new Ledger();
    private final List<ConsumerLoop> consumers = new ArrayList<>();
    private final List<String> wrongSelection = new java.util.concurrent.CopyOnWriteArrayList<>();
    private Connection producerConnection;
    private Connection consumerConnection;
    private Pacer pacer;

    JmsQueueFlow(String bootstrap, String queueName, Mode mode, boolean asyncSend, boolean selector, long periodMs) {
        this.bootstrap = bootstrap;
        this.queueName = queueName;
        this.mode = mode;
        this.asyncSend = asyncSend;
        this.selector = selector;
        this.periodMs = periodMs;
    }

    @Override
    public String name() {
        return "jms queue " + mode.name().toLowerCase() + (asyncSend ? ", async sends" : ", sync sends")
                + (selector ? ", selectors" : "");
    }

    @Override
    public void start() throws JMSException {
        MillraceConnectionFactory factory = Jms.factory(bootstrap, Map.of());
        producerConnection = factory.createConnection();
        consumerConnection = factory.createConnection();
        Session producerSession = producerConnection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue queue = producerSession.createQueue(queueName);
        MessageProducer producer = producerSession.createProducer(queue);
        producer.setDeliveryMode(DeliveryMode.PERSISTENT);
        if (selector) {
            consumers.add(consumer(queue, "kind = 'even'", "even"));
            consumers.add(consumer(queue, "kind = 'odd'", "odd"));
        } else {
            consumers.add(consumer(queue, null, null));
        }
        consumerConnection.start();
        pacer = new Pacer("chaos-" + queueName + "-producer", periodMs, seq -> send(producerSession, producer, seq));
    }

    private void send(Session session, MessageProducer producer, long seq) throws JMSException {
        String id = queueName + "-" + seq;
        TextMessage message = session.createTextMessage(id);
        message.setStringProperty(Jms.ID, id);
        message.setStringProperty("kind", seq % 2 == 0 ? "even" : "odd");
        try {
            if (asyncSend) {
                producer.send(message, new CompletionListener() {
                    @Override
                    public void onCompletion(Message sent) {
                        ledger.acknowledged(id);
                    }

                    @Override
                    public void onException(Message failed, Exception exception) {
                        ledger.sendFailed();
                    }
                });
            } else {
                producer.send(message);
                ledger.acknowledged(id);
            }
        } catch (JMSException | RuntimeException e) {
            ledger.sendFailed();
            throw e;
        }
    }

    private ConsumerLoop consumer(Queue queue, String messageSelector, String kind) throws JMSException {
        Session session = consumerConnection.createSession(mode == Mode.TRANSACTED, switch (mode) {
            case AUTO -> Session.AUTO_ACKNOWLEDGE;
            case CLIENT -> Session.CLIENT_ACKNOWLEDGE;
            case TRANSACTED -> Session.SESSION_TRANSACTED;
        });
        MessageConsumer consumer = session.createConsumer(queue, messageSelector);
        List<String> unsettled = new ArrayList<>();
        return new ConsumerLoop("chaos-" + queueName + "-consumer-" + kind, () -> {
            Message message = consumer.receive(500);
            if (message != null) {
                String id = Jms.id(message);
                ledger.delivered(id, Jms.flagged(message));
                if (kind != null && !kind.equals(message.getStringProperty("kind"))) {
                    wrongSelection.add(id);
                }
                unsettled.add(id);
            }
            if (unsettled.isEmpty() || message != null && unsettled.size() < 10) {
                return;
            }
            settle(session, message, unsettled);
        });
    }

    private void settle(Session session, Message last, List<String> unsettled) throws JMSException {
        try {
            switch (mode) {
                case AUTO -> unsettled.clear();
                case CLIENT -> {
                    if (last != null) {
                        last.acknowledge();
                        ledger.consumed(List.copyOf(unsettled));
                    }
                    unsettled.clear();
                }
                case TRANSACTED -> {
                    session.commit();
                    ledger.consumed(List.copyOf(unsettled));
                    unsettled.clear();
                }
            }
        } catch (TransactionRolledBackException e) {
            unsettled.clear(); // they come again, flagged
            throw e;
        } catch (JMSException e) {
            unsettled.clear();
            throw e;
        }
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
                + (consumers.isEmpty() ? "" : " lastError=" + consumers.get(0).lastError());
    }

    @Override
    public List<String> violations() {
        List<String> violations = new ArrayList<>();
        if (ledger.lost() > 0) {
            violations.add(ledger.lost() + " sent (acknowledged) messages never received, e.g. " + ledger.someLost());
        }
        if (ledger.unflaggedRedeliveries() > 0) {
            violations.add(ledger.unflaggedRedeliveries() + " messages received again without JMSRedelivered");
        }
        if (ledger.deliveredAfterFinalConsumption() > 0) {
            violations.add(ledger.deliveredAfterFinalConsumption() + " messages received again after their "
                    + (mode == Mode.TRANSACTED ? "commit" : "acknowledge") + " returned");
        }
        if (!wrongSelection.isEmpty()) {
            violations.add(wrongSelection.size() + " messages given to a consumer whose selector excludes them");
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
