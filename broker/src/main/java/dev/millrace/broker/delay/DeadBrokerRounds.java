package dev.millrace.broker.delay;

import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.controller.BrokerState;
import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataListener;

/**
 * Aborts the delivery round a broker that died may have left open, as soon as the cluster fences that broker, instead
 * of when the round's transaction times out.
 *
 * <p><b>Why.</b> In a cluster each broker's delivery rounds run under its own transactional id
 * ({@code __millrace-delay-node-<id>}, see {@link DelayedDeliveryService}). A broker killed in the middle of a round
 * leaves that transaction open: its copies hold back the last stable offset of their target partitions (read-committed
 * consumers see nothing after them) and its marks hold back the delay partitions it wrote (their new leader waits for
 * the round to be decided before delivering from them). Nobody else uses that id, so without this class the round
 * stays open until the transaction coordinator's periodic scan finds it past its timeout (the round timeout of up to
 * 10 s plus up to one scan interval, 10 s by default), or until the broker restarts and its writer initialises again.
 *
 * <p><b>What.</b> When the metadata shows a broker going from alive (unfenced, or in controlled shutdown) to fenced,
 * this broker, if it is unfenced itself, initialises the dead broker's delivery transactional id
 * ({@link Fencer}): the transaction coordinator then aborts the open round (markers on every partition it wrote) and
 * bumps the id's epoch, which also fences any write of the dead broker still in flight. Every unfenced broker does so
 * (two initialisations of one id are harmless and cost an epoch each), so the abort does not depend on a single
 * survivor. A broker fenced while still running (a long pause) loses its round in flight, which fails and is retried
 * like any failed round; its writer initialises again.
 *
 * <p>The initialisation is retried every {@value #RETRY_MS} ms while the broker stays fenced (the coordinator of the
 * id may be moving too); it stops once the broker is unfenced again (its own writer's initialisation decides the
 * round then).
 *
 * <p>Threading: {@link #onMetadataUpdate} is called on the controller's applying thread and only queues; the
 * initialisations run one at a time on this class's own thread.
 */
public final class DeadBrokerRounds implements MetadataListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DeadBrokerRounds.class);
    static final long RETRY_MS = 1_000;

    /** Initialises a transactional id, which aborts a transaction left open under it; blocks until done. */
    @FunctionalInterface
    public interface Fencer {
        void fence(String transactionalId) throws Exception;
    }

    private final int selfId;
    private final IntFunction<String> transactionalIdOf;
    private final Fencer fencer;
    private final Supplier<MetadataImage> image;
    private final ExecutorService executor;
    private volatile boolean closed;

    /**
     * @param selfId            this broker's id (never fenced by itself)
     * @param transactionalIdOf a broker's delivery transactional id, by broker id
     * @param fencer            initialises a transactional id
     * @param image             the current metadata image (to know whether a broker is still fenced)
     */
    public DeadBrokerRounds(int selfId, IntFunction<String> transactionalIdOf, Fencer fencer,
                            Supplier<MetadataImage> image) {
        this.selfId = selfId;
        this.transactionalIdOf = transactionalIdOf;
        this.fencer = fencer;
        this.image = image;
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "millrace-delay-dead-rounds");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public void onMetadataUpdate(MetadataImage previous, MetadataImage current) {
        if (closed || !current.isUnfenced(selfId)) {
            return;
        }
        // alive before, fenced now: its session expired, its port refused connections, or it registered again
        // (restarted) before either was noticed
        for (Map.Entry<Integer, MetadataImage.BrokerImage> entry : current.brokers().entrySet()) {
            int id = entry.getKey();
            MetadataImage.BrokerImage before = previous.brokers().get(id);
            if (id != selfId && entry.getValue().state() == BrokerState.FENCED && before != null
                    && before.state() != BrokerState.FENCED) {
                fenceSoon(id);
            }
        }
    }

    /**
     * Queues the initialisation of broker {@code brokerId}'s delivery transactional id. Each death is seen once (one
     * transition to fenced), so deaths are not deduplicated: a broker that dies again gets a second initialisation.
     */
    void fenceSoon(int brokerId) {
        if (closed) {
            return;
        }
        try {
            executor.execute(() -> fence(brokerId));
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void fence(int brokerId) {
        String transactionalId = transactionalIdOf.apply(brokerId);
        long started = System.nanoTime();
        for (int attempt = 1; !closed; attempt++) {
            if (image.get().isUnfenced(brokerId)) {
                log.info("Broker {} is back before its delivery rounds' id {} was initialised here; it decides "
                        + "its own open round", brokerId, transactionalId);
                return;
            }
            try {
                fencer.fence(transactionalId);
                log.info("Broker {} was fenced: initialised its delivery rounds' id {} (attempt {}, {} ms), which "
                        + "aborted any round it left open", brokerId, transactionalId, attempt,
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                log.warn("Could not initialise {}, the delivery rounds' id of fenced broker {} (attempt {}); "
                        + "retrying in {} ms: {}", transactionalId, brokerId, attempt, RETRY_MS, e.toString());
            }
            if (!sleep(RETRY_MS)) {
                return;
            }
        }
    }

    private boolean sleep(long ms) {
        synchronized (this) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
            try {
                long left = deadline - System.nanoTime();
                while (!closed && left > 0) {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                    left = deadline - System.nanoTime();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return !closed;
    }

    @Override
    public void close() {
        closed = true;
        synchronized (this) {
            notifyAll();
        }
        executor.shutdownNow();
        try {
            executor.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
