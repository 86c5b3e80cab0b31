package dev.millrace.chaos;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
 * JMS consume-transform-produce: a transacted session receives from an input queue, sends a transformed copy of each
 * input to an output queue and commits inputs and outputs together, up to {@value #MAX_PER_TRANSACTION} inputs per
 * transaction. A verifier receives the output. Promises checked: every sent input appears
 * in the output; none twice as a new message (a commit applied twice, or half of one: a copy sent while its input was
 * given back). The verifier may see an output message again only flagged (its own redelivery).
 *
 * <p>At the end the input's dead-letter queue is read too, so that an input missing from the output is reported as
 * dead-lettered (the broker gave up on it after {@code group.share.delivery.count.limit} deliveries, counted at
 * acquisition, though the transformer may never have received it) or as missing altogether. Both are violations: the
 * flow's transformer never rolls a message back on purpose.
 */
final class JmsTransformFlow implements Flow {

    /**
     * At most this many inputs per transaction: what is waiting when the transformer comes to it, so that it keeps up
     * with its input. One input per transaction costs a chain of replicated appends (AddPartitionsToTxn, the produce,
     * the share partition joining the transaction, PrepareCommit, the markers) that under the whole suite's load on
     * two cores allowed 10-13 transactions a second against 20 inputs a second: the backlog grew for the whole run,
     * and read ahead of a consumer that far behind was given back at failover after failover (each a delivery) until
     * inputs reached the dead-letter queue untransformed. Transactions of several inputs also check atomicity over
     * several inputs and outputs at once.
     */
    private static final int MAX_PER_TRANSACTION = 10;
    private static final String INPUT = "chaos-transform-in";
    private static final String OUTPUT = "chaos-transform-out";

    private final String bootstrap;
    private final long periodMs;
    private final Ledger ledger = new Ledger();
    private final List<ConsumerLoop> loops = new ArrayList<>();
    private Connection connection;
    private Pacer pacer;
    private volatile long rolledBack;
    /** The ids read from the input's dead-letter queue at the end ({@link #report()}), or null before. */
    private Set<String> deadLettered;
    private String deadLetterProblem = "";

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
            for (int n = 1; message != null; n++) {
                TextMessage copy = transformSession.createTextMessage("out:" + ((TextMessage) message).getText());
                copy.setStringProperty(Jms.ID, Jms.id(message));
                transformOut.send(copy);
                message = n < MAX_PER_TRANSACTION ? transformIn.receiveNoWait() : null;
            }
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
        deadLettered = readDeadLetters();
        Set<String> lost = ledger.lostIds();
        long lostDeadLettered = lost.stream().filter(deadLettered::contains).count();
        return ledger.summary() + " commitsRolledBack=" + rolledBack + " deadLettered=" + deadLettered.size()
                + " (of the lost: " + lostDeadLettered + ")" + deadLetterProblem + " lastError="
                + loops.get(0).lastError();
    }

    /** Every id in the input's dead-letter queue, read to its end with a consumer of its own. */
    private Set<String> readDeadLetters() {
        Set<String> ids = new HashSet<>();
        try (Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
             MessageConsumer dlq = session.createConsumer(session.createQueue(INPUT + ".DLQ"))) {
            // an empty queue answers nothing: stop after 5 s of silence
            for (Message message = dlq.receive(5_000); message != null; message = dlq.receive(5_000)) {
                ids.add(Jms.id(message));
            }
        } catch (JMSException e) {
            deadLetterProblem = " (dead-letter queue not read to its end: " + e + ")";
        }
        return ids;
    }

    @Override
    public List<String> violations() {
        List<String> violations = new ArrayList<>();
        if (ledger.lost() > 0) {
            Set<String> lost = ledger.lostIds();
            Set<String> dead = deadLettered == null ? Set.of() : deadLettered;
            List<String> missing = lost.stream().filter(id -> !dead.contains(id)).sorted().toList();
            long lostDead = lost.size() - missing.size();
            if (lostDead > 0) {
                violations.add(lostDead + " inputs dead-lettered without being transformed (their deliveries were "
                        + "counted at acquisition, not by the transformer)");
            }
            if (!missing.isEmpty()) {
                violations.add(missing.size() + " inputs neither transformed nor dead-lettered, e.g. "
                        + missing.subList(0, Math.min(10, missing.size())));
            }
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
