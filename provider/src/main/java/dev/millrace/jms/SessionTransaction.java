package dev.millrace.jms;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;

import dev.millrace.jms.wire.Delivery;
import dev.millrace.jms.wire.KafkaClients;
import dev.millrace.jms.wire.ShareFetcher;
import jakarta.jms.JMSException;
import jakarta.jms.TransactionRolledBackException;

/**
 * The broker transaction of one transacted session (JMS 3.1 §6.2.7 onto Kafka transactions).
 *
 * <ul>
 *   <li>Sends go through a transactional producer of the session's own ({@code transactional.id}
 *       {@code millrace-<connection id>-tx-<n>}, created at the first send); the transaction begins with the first
 *       send after a commit or rollback. Sends do not wait for the broker: a failed send fails the commit.</li>
 *   <li>{@link #commit}: when the transaction wrote something, queue messages consumed in it are held for it on the
 *       broker (TxnShareAcknowledge), and durable-subscription offsets join it (sendOffsetsToTransaction, as
 *       Kafka's consume-transform-produce does), so the broker's commit marker accepts and commits them together
 *       with the sends; then the sends are flushed and checked (they travelled while the holds were made), and the
 *       producer commits. A transaction that sent nothing acknowledges what it consumed
 *       with plain acknowledgements (nothing else is in it).</li>
 *   <li>{@link #rollback}: the producer aborts (the sends are never visible to read-committed consumers); the
 *       session then redelivers what it consumed (queues release it: JMSRedelivered, delivery count + 1).</li>
 *   <li>When the broker aborted the transaction (its timeout, a fencing) or a send failed, commit aborts what is
 *       left, redelivers what was consumed, and throws {@link TransactionRolledBackException}.</li>
 *   <li>Failover: sends, the acknowledgement holds and the commit request each retry through a lost broker or a
 *       moved leader/coordinator for up to {@code requestTimeoutMs + failoverTimeoutMs}. A failure before the commit
 *       request is sent rolls back (TransactionRolledBackException: the broker has made nothing visible, and aborts
 *       the transaction, at the latest at its timeout). Only when the commit request itself stays unanswered that
 *       long is the outcome unknown to the client ({@link #inDoubt}).</li>
 * </ul>
 *
 * <p>Not thread-safe: used by the session's thread of control (JMS sessions are single-threaded).
 */
final class SessionTransaction implements AutoCloseable {

    private static final AtomicLong SEQUENCE = new AtomicLong();

    private final MillraceConnection connection;
    private final String transactionalId;
    private KafkaProducer<byte[], byte[]> producer;
    private boolean open;
    private boolean wrote;
    private final List<Future<RecordMetadata>> sends = new ArrayList<>();

    SessionTransaction(MillraceConnection connection) {
        this.connection = connection;
        this.transactionalId = "millrace-" + connection.connectionId() + "-tx-" + SEQUENCE.incrementAndGet();
    }

    String transactionalId() {
        return transactionalId;
    }

    /** The producer for a send in the current transaction, which begins here if it has not yet. */
    synchronized KafkaProducer<byte[], byte[]> producerForSend() throws JMSException {
        try {
            if (producer == null) {
                producer = KafkaClients.transactionalProducer(connection.settings(), transactionalId,
                        transactionalId, connection.settings().transactionTimeoutMs());
                producer.initTransactions();
            }
            if (!open) {
                producer.beginTransaction();
                open = true;
            }
        } catch (KafkaException e) {
            discardProducer();
            throw JmsExceptions.fromClient("begin a transaction", e);
        }
        wrote = true;
        return producer;
    }

    /** A send made in the current transaction; its outcome is checked at commit. */
    synchronized void sent(Future<RecordMetadata> send) {
        sends.add(send);
    }

    /**
     * Commits: see the class comment.
     *
     * @param consumed what the session consumed in the transaction, by consumer
     * @throws TransactionRolledBackException when the transaction was rolled back instead (everything consumed
     *                                        is redelivered)
     */
    synchronized void commit(Map<MillraceMessageConsumer, List<Delivery>> consumed) throws JMSException {
        if (!wrote) {
            end();
            acknowledgeConsumed(consumed);
            return;
        }
        List<Map.Entry<MillraceMessageConsumer, List<Delivery>>> afterCommit = new ArrayList<>();
        boolean committing = false;
        try {
            // the holds first: the sends are on their way already (linger 0 by default), so the holds' round trips
            // overlap theirs instead of following them; the flush then finds them done or nearly
            for (Map.Entry<MillraceMessageConsumer, List<Delivery>> e : consumed.entrySet()) {
                if (e.getKey().acceptInTransaction(connection.extensions(), transactionalId, e.getValue())) {
                    continue;
                }
                var offsets = e.getKey().transactionOffsets(e.getValue());
                if (offsets != null && !offsets.getValue().isEmpty()) {
                    producer.sendOffsetsToTransaction(offsets.getValue(), new ConsumerGroupMetadata(offsets.getKey()));
                }
                afterCommit.add(e);
            }
            producer.flush();
            long timeoutMs = connection.settings().blockingTimeoutMs() + connection.settings().requestTimeoutMs();
            for (Future<RecordMetadata> send : sends) {
                send.get(timeoutMs, TimeUnit.MILLISECONDS);
            }
            committing = true;
            producer.commitTransaction(); // retries through a failover for up to max.block.ms (KafkaClients)
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            if (committing && e instanceof org.apache.kafka.common.errors.TimeoutException) {
                throw inDoubt(e);
            }
            abortQuietly();
            redeliver(consumed);
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            TransactionRolledBackException rolledBack = new TransactionRolledBackException(
                    "the transaction was rolled back instead of committed: " + cause);
            rolledBack.setLinkedException(cause instanceof Exception ex ? ex : e);
            rolledBack.initCause(cause);
            throw rolledBack;
        } finally {
            open = false;
            wrote = false;
            sends.clear();
        }
        for (Map.Entry<MillraceMessageConsumer, List<Delivery>> e : afterCommit) {
            e.getKey().committedInTransaction(e.getValue());
        }
    }

    /**
     * commitTransaction found no broker to answer for {@code max.block.ms} ({@code requestTimeoutMs +
     * failoverTimeoutMs}): the commit request may or may not have reached the transaction coordinator, and only the
     * broker knows which. It decides all or nothing either way (a commit it received completes; a transaction it
     * never heard the end of is aborted at its timeout), so nothing is half applied; but the provider cannot tell
     * which, so this is a plain JMSException saying so, not a TransactionRolledBackException. The producer is
     * discarded (the next transaction starts with a new one, which fences this one). Queue messages consumed in
     * the transaction are held for it on the broker already: its commit accepts them, its abort releases them.
     */
    private JMSException inDoubt(Exception timeout) {
        discardProducer();
        JMSException e = new JMSException("the outcome of the commit is unknown: the cluster at "
                + connection.settings().brokers() + " did not answer within requestTimeoutMs + failoverTimeoutMs ("
                + connection.settings().blockingTimeoutMs() + " ms); the broker commits or aborts the whole "
                + "transaction, never a part: " + timeout.getMessage(), "TRANSACTION_OUTCOME_UNKNOWN");
        e.setLinkedException(timeout);
        e.initCause(timeout);
        return e;
    }

    /**
     * The commit of a transaction that only consumed: each consumer's messages are accepted with one synchronous
     * settlement (sent again after a failover). When the first consumer's is refused (a failover released its
     * messages), the rest is released too and the commit throws {@link TransactionRolledBackException}: the broker
     * accepted none of them (a refused settlement applies only to records still held, which after a failover are
     * none, or all if it kept them). Not covered, and said so with a plain JMSException instead: a refusal after
     * another consumer's messages were accepted (partly applied: a failover fell between two consumers'
     * settlements), or a refusal of a request sent again after its first answer was lost (the first may have been
     * applied: {@link ShareFetcher#SETTLE_OUTCOME_UNKNOWN}).
     */
    private static void acknowledgeConsumed(Map<MillraceMessageConsumer, List<Delivery>> consumed)
            throws JMSException {
        boolean accepted = false;
        for (Map.Entry<MillraceMessageConsumer, List<Delivery>> e : consumed.entrySet()) {
            try {
                e.getKey().acknowledge(e.getValue(), true);
                accepted = true;
            } catch (JMSException failure) {
                Map<MillraceMessageConsumer, List<Delivery>> rest = new java.util.LinkedHashMap<>(consumed);
                rest.remove(e.getKey());
                if (ShareFetcher.SETTLE_OUTCOME_UNKNOWN.equals(failure.getErrorCode())) {
                    throw failure;
                }
                if (accepted) {
                    JMSException partly = new JMSException("the commit was applied only in part: the messages of "
                            + "one consumer were accepted, those of " + e.getKey() + " were not ("
                            + failure.getMessage()
                            + "); they will be delivered again");
                    partly.setLinkedException(failure);
                    partly.initCause(failure);
                    throw partly;
                }
                redeliver(rest);
                TransactionRolledBackException rolledBack = new TransactionRolledBackException(
                        "the transaction was rolled back instead of committed: " + failure.getMessage());
                rolledBack.setLinkedException(failure);
                rolledBack.initCause(failure);
                throw rolledBack;
            }
        }
    }

    /** Aborts the broker transaction, if one is open; the caller redelivers what was consumed. */
    synchronized void rollback() {
        abortQuietly();
        open = false;
        wrote = false;
        sends.clear();
    }

    private void end() throws JMSException {
        if (open) {
            try {
                producer.commitTransaction(); // nothing was added: the client ends it without the broker
            } catch (KafkaException e) {
                discardProducer();
                throw JmsExceptions.fromClient("end an empty transaction", e);
            } finally {
                open = false;
            }
        }
    }

    private void abortQuietly() {
        if (producer == null || !open) {
            return;
        }
        try {
            producer.abortTransaction();
        } catch (KafkaException e) {
            // fenced or failed: the broker aborts the transaction (or already has); start over with a new producer
            discardProducer();
        }
        open = false;
    }

    private static void redeliver(Map<MillraceMessageConsumer, List<Delivery>> consumed) {
        for (Map.Entry<MillraceMessageConsumer, List<Delivery>> e : consumed.entrySet()) {
            try {
                e.getKey().redeliver(e.getValue());
            } catch (JMSException ignored) {
                // the consumer is gone: its records come back when their locks expire
            }
        }
    }

    private void discardProducer() {
        if (producer != null) {
            try {
                producer.close(java.time.Duration.ZERO);
            } catch (KafkaException ignored) {
                // closing anyway
            }
            producer = null;
        }
        open = false;
    }

    /** Rolls back an open transaction and closes the producer. */
    @Override
    public synchronized void close() {
        abortQuietly();
        if (producer != null) {
            producer.close(java.time.Duration.ofSeconds(5));
            producer = null;
        }
    }
}
