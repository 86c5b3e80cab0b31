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
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import dev.millrace.jms.MillraceConnectionFactory;

/**
 * JMS consume-transform-produce: a transacted session receives from an input queue, sends a transformed copy to an
 * output queue and commits both together. A verifier receives the output. Promises checked: every sent input appears
 * in the output; none twice as a new message (a commit applied twice, or half of one: a copy sent while its input was
 * given back). The verifier may see an output message again only flagged (its own redelivery).
 */
final class JmsTransformFlow implements Flow {

    private static final String INPUT = "chaos-transform-in";
    private static final String OUTPUT = "chaos-transform-out";

    private final String bootstrap;
    private final long periodMs;
    private final Ledger ledger = new Ledger();
    private final List<ConsumerLoop> loops = new ArrayList<>();
    private Connection connection;
    private Pacer pacer;
    private volatile long rolledBack;

    JmsTransformFlow(String bootstrap, long periodMs) {
        this.bootstrap = bootstrap;
        this.periodMs = periodMs;
    }

    @Override
    public String name() {
        return "jms transacted consume-transform-produce";
    }

    @Override
    public void start() throws JMSException {
        MillraceConnectionFactory factory = Jms.factory(bootstrap, Map.of());
        connection = factory.createConnection();
        Session producerSession = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue input = producerSession.createQueue(INPUT);
        MessageProducer producer = producerSession.createProducer(input);
        producer.setDeliveryMode(DeliveryMode.PERSISTENT);

        Session transformSession = connection.createSession(true, Session.SESSION_TRANSACTED);
        MessageConsumer transformIn = transformSession.createConsumer(input);
        MessageProducer transformOut = transformSession.createProducer(transformSession.createQueue(OUTPUT));
        loops.add(new ConsumerLoop("chaos-transform", () -> {
            Message message = transformIn.receive(500);
            if (message == null) {
                return;
            }
            TextMessage copy = transformSession.createTextMessage("out:" + ((TextMessage) message).getText());
            copy.setStringProperty(Jms.ID, Jms.id(message));
            transformOut.send(copy);
            try {
                transformSession.commit();
            } catch (JMSException e) {
                rolledBack++;
                throw e;
            }
        }));

        Session verifySession = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageConsumer verifier = verifySession.createConsumer(verifySession.createQueue(OUTPUT));
        loops.add(new ConsumerLoop("chaos-transform-verifier", () -> {
            Message message = verifier.receive(500);
            if (message != null) {
                ledger.delivered(Jms.id(message), Jms.flagged(message));
            }
        }));
        connection.start();
        pacer = new Pacer("chaos-transform-producer", periodMs, seq -> {
            Jms.sendTracked(producerSession, producer, INPUT + "-" + seq, ledger);
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
        return ledger.summary() + " commitsRolledBack=" + rolledBack + " lastError=" + loops.get(0).lastError();
    }

    @Override
    public List<String> violations() {
        List<String> violations = new ArrayList<>();
        if (ledger.lost() > 0) {
            violations.add(ledger.lost() + " inputs never transformed, e.g. " + ledger.someLost());
        }
        if (ledger.unflaggedRedeliveries() > 0) {
            violations.add(ledger.unflaggedRedeliveries() + " inputs transformed (committed) more than once");
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
