package dev.millrace.broker.txn;

import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;

import dev.millrace.broker.controller.ProducerIdBlock;

/**
 * Hands out producer ids for idempotent producers from blocks this broker obtains from the metadata
 * quorum ({@link dev.millrace.broker.controller.Controller#allocateProducerIds}, through the active
 * controller); a block is never given to two brokers nor reused after a restart, so a producer id
 * is never handed out twice. When the current block is used up the next caller triggers one
 * allocation, and every caller waiting meanwhile is served from it.
 *
 * <p>Thread-safe; never blocks: callers get a future.
 */
public final class ProducerIdManager implements ProducerIdSource {

    private final IntFunction<CompletableFuture<ProducerIdBlock>> allocator;
    private final int brokerId;
    private ProducerIdBlock current;
    private long next;
    private CompletableFuture<ProducerIdBlock> pending;

    /** @param allocator obtains the next block for a broker id from the active controller */
    public ProducerIdManager(IntFunction<CompletableFuture<ProducerIdBlock>> allocator, int brokerId) {
        this.allocator = allocator;
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
                pending = allocator.apply(brokerId).whenComplete((block, error) -> {
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
