package dev.millrace.jms;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.KafkaException;

import dev.millrace.jms.wire.KafkaClients;

/**
 * The transactional ids (and their producers) an XA connection's branches run on: {@code millrace-xa-<connection
 * id>-<n>}. A branch leases one for its life on the client, prepare included, and gives it back when it completes;
 * its producer is kept with the id for the next branch ({@link #giveBack}; after a prepare the broker frees the
 * producer once the branch completes, see {@link XaBranch}). A producer that cannot go on (a lost prepare, a refused
 * EndTxn, a heuristic outcome) is closed and a new one is made for the id in the background ({@link #retire}), so
 * that the next branch finds it initialised: a new KafkaProducer costs several round trips (bootstrap,
 * FindCoordinator, a connection to the coordinator, InitProducerId, metadata) that would otherwise sit inside the
 * next transaction. So the ids in use stay as many as the branches open or in doubt here at once; a branch prepared
 * here but completed elsewhere (another JVM's recovery) keeps its id and producer until the connection closes.
 *
 * <p>The background work runs on one thread per connection, started on the first prepare and ended after 30 s
 * without work. XA producers retry after {@value #RETRY_BACKOFF_MS} ms rather than kafka-clients' 100 ms (growing
 * to its 1 s maximum when retries repeat): a new producer's first request to the coordinator it just found waits
 * one back-off for the connection, which would otherwise be 100 ms in every new producer's start.
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

    /** retry.backoff.ms of XA producers (see the class comment). */
    static final int RETRY_BACKOFF_MS = 10;

    private final ConnectionSettings settings;
    private final String prefix;
    private final Deque<Lease> free = new ArrayDeque<>();
    /** Ids whose new producer is being made in the background, oldest first; never completed exceptionally. */
    private final Deque<CompletableFuture<Lease>> warming = new ArrayDeque<>();
    /** Producers leased to branches, closed with the connection. */
    private final Set<KafkaProducer<byte[], byte[]>> leased = Collections.newSetFromMap(new IdentityHashMap<>());
    private final ThreadPoolExecutor warmer;
    private int next;
    private boolean closed;

    XaProducers(ConnectionSettings settings, String connectionId) {
        this.settings = settings;
        this.prefix = "millrace-xa-" + connectionId + "-";
        this.warmer = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "millrace-xa-producers-" + connectionId);
            t.setDaemon(true);
            return t;
        });
        warmer.allowCoreThreadTimeOut(true);
    }

    /**
     * A free transactional id with an initialised producer whose transaction timeout is {@code timeoutMs}.
     *
     * @throws KafkaException when the producer cannot be initialised (InitProducerId)
     */
    Lease take(int timeoutMs) {
        Lease lease;
        CompletableFuture<Lease> warmed = null;
        synchronized (this) {
            if (closed) {
                throw new KafkaException("the XA connection is closed");
            }
            lease = free.pollFirst();
            if (lease == null) {
                warmed = warming.pollFirst();
            }
            if (lease == null && warmed == null) {
                lease = new Lease(prefix + (++next), null, timeoutMs);
            }
        }
        if (warmed != null) {
            lease = warmed.join();
        }
        if (lease.producer() != null && lease.timeoutMs() != timeoutMs) {
            close(lease.producer());
            lease = lease.withoutProducer();
        }
        return lease.producer() != null ? leased(lease)
                : withProducer(new Lease(lease.transactionalId(), null, timeoutMs));
    }

    private Lease leased(Lease lease) {
        boolean isClosed;
        synchronized (this) {
            isClosed = closed;
            if (!isClosed) {
                leased.add(lease.producer());
            }
        }
        if (isClosed) {
            close(lease.producer());
            throw new KafkaException("the XA connection is closed");
        }
        return lease;
    }

    /** {@code lease} with a new initialised producer (its last one was discarded). */
    Lease withProducer(Lease lease) {
        try {
            return leased(initialised(lease));
        } catch (KafkaException e) {
            synchronized (this) {
                free.addLast(lease.withoutProducer());
            }
            throw e;
        }
    }

    private Lease initialised(Lease lease) {
        KafkaProducer<byte[], byte[]> producer = KafkaClients.transactionalProducer(settings, lease.transactionalId(),
                lease.transactionalId(), lease.timeoutMs(), RETRY_BACKOFF_MS);
        try {
            producer.initTransactions();
        } catch (KafkaException e) {
            close(producer);
            throw e;
        }
        return new Lease(lease.transactionalId(), producer, lease.timeoutMs());
    }

    /**
     * Takes back the lease of a prepared branch: its producer is closed (its producer id belongs to the branch) and
     * a new one is initialised for the transactional id in the background, for the next {@link #take}. A failed
     * initialisation leaves the id without a producer: the taker initialises it (and sees the failure).
     */
    void retire(Lease lease) {
        Lease bare = lease.withoutProducer();
        KafkaProducer<byte[], byte[]> old = lease.producer();
        synchronized (this) {
            leased.remove(old);
            if (!closed) {
                warming.addLast(CompletableFuture.supplyAsync(() -> {
                    if (old != null) {
                        close(old);
                    }
                    try {
                        return initialised(bare);
                    } catch (KafkaException e) {
                        return bare;
                    }
                }, warmer));
                return;
            }
        }
        if (old != null) {
            close(old);
        }
    }

    /** Gives {@code lease} back; its producer, if any, must have no open transaction. */
    void giveBack(Lease lease) {
        synchronized (this) {
            leased.remove(lease.producer());
            if (!closed) {
                free.addFirst(lease);
                return;
            }
        }
        if (lease.producer() != null) {
            close(lease.producer());
        }
    }

    /** Closes a leased producer that cannot go on; its lease is given back later without it. */
    void discard(KafkaProducer<byte[], byte[]> producer) {
        synchronized (this) {
            leased.remove(producer);
        }
        close(producer);
    }

    /** Whether {@link #close} ran: no lease given back is taken again, so no later take aborts an id's transaction. */
    synchronized boolean isClosed() {
        return closed;
    }

    /**
     * Aborts the open transaction of {@code lease}'s transactional id on the broker now, with a producer made for
     * it alone: its InitProducerId aborts the id's ongoing transaction and fences the producer that began it. For a
     * branch rolled back after its connection closed: otherwise its transaction would stay open until its timeout,
     * and with it the last stable offset of every partition it wrote (read-committed and queue consumers see
     * nothing past it) and the messages it consumed. Closed again at once.
     *
     * @throws KafkaException when the broker cannot be reached within the blocking timeout (the broker then aborts
     *         the transaction at its timeout)
     */
    void abortOpenTransaction(Lease lease) {
        close(initialised(lease).producer());
    }

    /** Closes at once (a zero timeout: a graceful close would send an abort for an open transaction). */
    private static void close(KafkaProducer<byte[], byte[]> producer) {
        try {
            producer.close(Duration.ZERO);
        } catch (KafkaException ignored) {
            // closing anyway
        }
    }

    /**
     * Closes the pooled producers and those leased to branches (an open branch then fails at its next step; a
     * prepared one stays prepared on the broker); leases given back later are closed then.
     */
    @Override
    public void close() {
        Deque<Lease> toClose;
        synchronized (this) {
            closed = true;
            toClose = new ArrayDeque<>(free);
            free.clear();
            for (KafkaProducer<byte[], byte[]> p : leased) {
                toClose.add(new Lease("", p, 0));
            }
            leased.clear();
            for (CompletableFuture<Lease> w : warming) {
                w.thenAccept(l -> {
                    if (l.producer() != null) {
                        close(l.producer());
                    }
                });
            }
            warming.clear();
        }
        warmer.shutdown();
        for (Iterator<Lease> it = toClose.iterator(); it.hasNext(); ) {
            Lease l = it.next();
            if (l.producer() != null) {
                close(l.producer());
            }
        }
    }
}
