package dev.millrace.broker.txn;

import java.util.concurrent.CompletableFuture;

/** Where the transaction coordinator gets producer ids for new transactional ids. */
@FunctionalInterface
public interface ProducerIdSource {

    /** The next unused producer id; never the same twice, also across restarts. */
    CompletableFuture<Long> nextProducerId();
}
