package dev.millrace.broker.delay;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.log.AppendOrigin;
import dev.millrace.broker.log.LogAppendInfo;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.txn.TransactionCoordinator;
import dev.millrace.protocol.delay.DelayedDelivery;

/**
 * Rounds through this broker's own {@link TransactionCoordinator} and local appends, the way a single node writes
 * them: no network hop, one batch per target partition and per delay partition:
 * <pre>
 *   AddPartitions(targets of the copies + delay partitions of the marks)
 *   append copies         target t: one batch per target partition
 *   append marks          delay p:  one batch per delay partition, a mark (done.offset = o) per record
 *   EndTxn(commit)        commit markers on every partition above
 * </pre>
 * Every partition of a round must be hosted and led here; the appends do not wait for followers, so this writer is
 * for a node without followers (see {@link ProducerRoundWriter} for a cluster). The first initialisation also
 * re-initialises {@code legacyIds} the coordinator knows (ids of older versions), which aborts a round they left
 * open.
 *
 * <p>Threading: as {@link RoundWriter}.
 */
public final class LocalRoundWriter implements RoundWriter {

    private static final Logger log = LoggerFactory.getLogger(LocalRoundWriter.class);
    private static final long CONCURRENT_RETRY_MS = 100;

    private final TransactionCoordinator transactions;
    private final DelayLogs logs;
    private final String transactionalId;
    private final int transactionTimeoutMs;
    private final List<String> legacyIds;
    private volatile long producerId = -1;
    private short epoch = -1;
    private volatile boolean ready;
    private boolean legacyFenced;

    public LocalRoundWriter(TransactionCoordinator transactions, DelayLogs logs, String transactionalId,
                            int transactionTimeoutMs, List<String> legacyIds) {
        this.transactions = transactions;
        this.logs = logs;
        this.transactionalId = transactionalId;
        this.transactionTimeoutMs = transactionTimeoutMs;
        this.legacyIds = List.copyOf(legacyIds);
    }

    @Override
    public void ensureReady() throws Exception {
        if (ready) {
            return;
        }
        if (!legacyFenced) {
            for (String legacy : legacyIds) {
                if (transactions.describe(List.of(legacy)).containsKey(legacy)) {
                    initTransactionalId(legacy);
                }
            }
            legacyFenced = true;
        }
        TransactionCoordinator.InitResult init = initTransactionalId(transactionalId);
        producerId = init.producerId();
        epoch = init.producerEpoch();
        ready = true;
    }

    @Override
    public boolean ready() {
        return ready;
    }

    @Override
    public String transactionalId() {
        return transactionalId;
    }

    @Override
    public long producerId() {
        return producerId;
    }

    /**
     * InitProducerId for {@code id}. While the coordinator is still writing the markers of an abort it answers
     * CONCURRENT_TRANSACTIONS; the call is repeated for up to the transaction timeout.
     */
    private TransactionCoordinator.InitResult initTransactionalId(String id) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(transactionTimeoutMs);
        TransactionCoordinator.InitResult init = transactions.initProducerId(id, transactionTimeoutMs, -1,
                (short) -1).get(60, TimeUnit.SECONDS);
        while (init.error() == Errors.CONCURRENT_TRANSACTIONS && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(CONCURRENT_RETRY_MS);
            init = transactions.initProducerId(id, transactionTimeoutMs, -1, (short) -1).get(60, TimeUnit.SECONDS);
        }
        if (init.error() != Errors.NONE) {
            throw init.error().exception("Cannot initialise " + id + " for the delay service");
        }
        return init;
    }

    @Override
    public Map<TopicPartition, Long> write(DeliveryRound round) throws Exception {
        try {
            Set<TopicPartition> touched = new LinkedHashSet<>(round.copies().keySet());
            touched.addAll(round.marks().keySet());
            Errors added = transactions.addPartitions(transactionalId, producerId, epoch, touched)
                    .get(30, TimeUnit.SECONDS);
            if (added != Errors.NONE) {
                throw added.exception("AddPartitions for " + transactionalId);
            }
            for (Map.Entry<TopicPartition, List<DeliveryRound.Copy>> copies : round.copies().entrySet()) {
                MemoryRecordsBuilder batch = builder();
                for (DeliveryRound.Copy copy : copies.getValue()) {
                    batch.append(copy.timestamp(), copy.key(), copy.value(), copy.headers());
                }
                append(copies.getKey(), batch);
            }
            Map<TopicPartition, Long> markBatches = new LinkedHashMap<>();
            for (Map.Entry<TopicPartition, List<Long>> marks : round.marks().entrySet()) {
                MemoryRecordsBuilder batch = builder();
                for (long offset : marks.getValue()) {
                    batch.append(round.nowMs(), (byte[]) null, (byte[]) null, new Header[] {
                        new RecordHeader(DelayedDelivery.DONE_OFFSET, DelayedDelivery.encodeLong(offset))});
                }
                markBatches.put(marks.getKey(), append(marks.getKey(), batch).firstOffset());
            }
            if (!round.stillLed()) {
                throw new IllegalStateException("a delay partition of the round is no longer led here");
            }
            Errors ended = transactions.endTransaction(transactionalId, producerId, epoch, true)
                    .get(30, TimeUnit.SECONDS);
            if (ended != Errors.NONE) {
                throw ended.exception("EndTxn for " + transactionalId);
            }
            return markBatches;
        } catch (Exception e) {
            abortQuietly();
            throw e;
        }
    }

    private LogAppendInfo append(TopicPartition tp, MemoryRecordsBuilder batch) {
        PartitionLog partitionLog = logs.log(tp).orElseThrow(() -> new IllegalStateException(tp + " went offline"));
        return partitionLog.appendAsLeader(batch.build(), logs.leaderEpoch(tp), AppendOrigin.COORDINATOR);
    }

    private void abortQuietly() {
        try {
            Errors aborted = transactions.endTransaction(transactionalId, producerId, epoch, false)
                    .get(30, TimeUnit.SECONDS);
            if (aborted == Errors.PRODUCER_FENCED || aborted == Errors.INVALID_PRODUCER_ID_MAPPING) {
                ready = false;
            }
        } catch (Exception e) {
            log.warn("Could not abort the delivery round: {}", e.toString());
        }
    }

    private MemoryRecordsBuilder builder() {
        return MemoryRecords.builder(ByteBuffer.allocate(16 * 1024), RecordBatch.CURRENT_MAGIC_VALUE, Compression.NONE,
                TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, producerId, epoch, 0, true,
                RecordBatch.NO_PARTITION_LEADER_EPOCH);
    }

    @Override
    public void close() {
        // nothing held: the coordinator is the broker's
    }
}
