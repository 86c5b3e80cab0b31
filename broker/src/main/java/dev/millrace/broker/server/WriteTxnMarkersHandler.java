package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;

/**
 * WriteTxnMarkers (API 27, versions 1-2): a transaction coordinator on another broker (or an admin's
 * {@code abortTransaction}) has this broker write commit or abort markers to partitions it leads. Each marker is
 * written by {@link LocalTxnMarkerWriter} with the request's coordinator epoch, and each partition is answered once its
 * marker is on the in-sync replicas (as an acks=all produce), NOT_LEADER_OR_FOLLOWER where this broker does not lead
 * the partition (the coordinator asks the new leader), or the log's refusal (e.g. INVALID_PRODUCER_EPOCH for a marker
 * of an older producer epoch). For a {@code __consumer_offsets} partition the group coordinator applies or drops the
 * producer's transactional offsets, and once every partition of an entry is written the share-transactions listener
 * settles the share acknowledgements held here for that producer.
 *
 * <p>Thread-safe; called on request threads; never blocks.
 */
final class WriteTxnMarkersHandler {

    private final LocalTxnMarkerWriter local;

    WriteTxnMarkersHandler(LocalTxnMarkerWriter local) {
        this.local = local;
    }

    CompletableFuture<WriteTxnMarkersResponse> handle(WriteTxnMarkersRequest request) {
        List<CompletableFuture<Map<TopicPartition, Errors>>> entries = new ArrayList<>();
        List<Long> producers = new ArrayList<>();
        for (WriteTxnMarkersRequest.TxnMarkerEntry entry : request.markers()) {
            producers.add(entry.producerId());
            entries.add(local.write(entry.producerId(), entry.producerEpoch(), entry.coordinatorEpoch(),
                    entry.transactionResult() == TransactionResult.COMMIT, entry.partitions()));
        }
        return CompletableFuture.allOf(entries.toArray(CompletableFuture[]::new)).thenApply(v -> {
            Map<Long, Map<TopicPartition, Errors>> errors = new HashMap<>();
            for (int i = 0; i < entries.size(); i++) {
                errors.computeIfAbsent(producers.get(i), k -> new HashMap<>()).putAll(entries.get(i).join());
            }
            return new WriteTxnMarkersResponse(errors);
        });
    }
}
