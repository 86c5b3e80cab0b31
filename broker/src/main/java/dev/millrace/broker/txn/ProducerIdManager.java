package dev.millrace.broker.txn;

import java.util.concurrent.CompletableFuture;

import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.ProducerIdBlock;

/**
 * Hands out producer ids for idempotent producers from blocks this broker obtains from the metadata
 * quorum ({@link Controller#allocateProducerIds}); a block is never given to two brokers nor reused
 * after a restart, so a producer id is never handed out twice. When the current block is used up
 * the next caller triggers one allocation, and every caller waiting meanwhile is served from it.
 *
 * <p>Thread-safe; never blocks: callers get a future.
 */
public final class ProducerIdManager implements ProducerIdSource {

    private final Controller controller;
    private final int brokerId;
    private ProducerIdBlock current;
    private long next;
    private CompletableFuture<ProducerIdBlock> pending;

    public ProducerIdManager(Controller controller, int brokerId) {
        this.controller = controller;
        this.brokerId = brokerId;
    }

    /** The next unused producer id. */
    @Override
    public CompletableFuture<Long> nextProducerId() {
        CompletableFuture<ProducerIdBlock> waitFor;
        synchronized (this) {
            if (current != null && next <= current.lastProducerId()) {
                return CompletableFuture.completedFuture(next++);
            }
            if (pending == null) {
                pending = controller.allocateProducerIds(brokerId).whenComplete((block, error) -> {
                    synchronized (this) {
                        pending = null;
                        if (block != null) {
                            current = block;
                            next = block.firstProducerId();
                        }
                    }
                });
            }
            waitFor = pending;
        }
        return waitFor.thenCompose(block -> nextProducerId());
    }
}
