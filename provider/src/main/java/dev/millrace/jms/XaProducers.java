package dev.millrace.jms;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.KafkaException;

import dev.millrace.jms.wire.KafkaClients;

/**
 * The transactional ids (and their producers) an XA connection's branches run on: {@code millrace-xa-<connection
 * id>-<n>}. A branch leases one for its life on the client and gives it back when it is prepared (the id can serve
 * the next branch at once: its next InitProducerId gets a new producer id and leaves the prepared branch alone) or
 * completed. A producer that ended its transaction with commit or abort is kept with its id for the next branch;
 * after a prepare the producer is closed (its producer id belongs to the branch) and the next lease makes a new
 * one. So the ids in use stay as many as the branches open at once.
 *
 * <p>Thread-safe.
 */
final class XaProducers implements AutoCloseable {

    /** A transactional id and its initialised producer (null once discarded) with its transaction timeout. */
    record Lease(String transactionalId, KafkaProducer<byte[], byte[]> producer, int timeoutMs) {

        Lease withoutProducer() {
            return new Lease(transactionalId, null, timeoutMs);
        }
    }

    private final ConnectionSettings settings;
    private final String prefix;
    private final Deque<Lease> free = new ArrayDeque<>();
    private int next;
    private boolean closed;

    XaProducers(ConnectionSettings settings, String connectionId) {
        this.settings = settings;
        this.prefix = "millrace-xa-" + connectionId + "-";
    }

    /**
     * A free transactional id with an initialised producer whose transaction timeout is {@code timeoutMs}.
     *
     * @throws KafkaException when the producer cannot be initialised (InitProducerId)
     */
    Lease take(int timeoutMs) {
        Lease lease;
        synchronized (this) {
            if (closed) {
                throw new KafkaException("the XA connection is closed");
            }
            lease = free.pollFirst();
            if (lease == null) {
                lease = new Lease(prefix + (++next), null, timeoutMs);
            }
        }
        if (lease.producer() != null && lease.timeoutMs() != timeoutMs) {
            close(lease.producer());
            lease = lease.withoutProducer();
        }
        return lease.producer() != null ? lease : withProducer(new Lease(lease.transactionalId(), null, timeoutMs));
    }

    /** {@code lease} with a new initialised producer (its last one was discarded). */
    Lease withProducer(Lease lease) {
        KafkaProducer<byte[], byte[]> producer = KafkaClients.transactionalProducer(settings, lease.transactionalId(),
                lease.transactionalId(), lease.timeoutMs());
        try {
            producer.initTransactions();
        } catch (KafkaException e) {
            close(producer);
            synchronized (this) {
                free.addLast(lease.withoutProducer());
            }
            throw e;
        }
        return new Lease(lease.transactionalId(), producer, lease.timeoutMs());
    }

    /** Gives {@code lease} back; its producer, if any, must have no open transaction. */
    void giveBack(Lease lease) {
        synchronized (this) {
            if (!closed) {
                free.addFirst(lease);
                return;
            }
        }
        if (lease.producer() != null) {
            close(lease.producer());
        }
    }

    private static void close(KafkaProducer<byte[], byte[]> producer) {
        try {
            producer.close(Duration.ZERO);
        } catch (KafkaException ignored) {
            // closing anyway
        }
    }

    /** Closes the pooled producers; leases given back later are closed then. */
    @Override
    public void close() {
        Deque<Lease> toClose;
        synchronized (this) {
            closed = true;
            toClose = new ArrayDeque<>(free);
            free.clear();
        }
        for (Iterator<Lease> it = toClose.iterator(); it.hasNext(); ) {
            Lease l = it.next();
            if (l.producer() != null) {
                close(l.producer());
            }
        }
    }
}
