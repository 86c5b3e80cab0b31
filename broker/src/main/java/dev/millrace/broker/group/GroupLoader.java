package dev.millrace.broker.group;

import java.util.Optional;
import java.util.function.Consumer;

import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.log.FetchDataInfo;
import dev.millrace.broker.log.PartitionLog;

/**
 * Replays one partition of {@code __consumer_offsets} from its log start to the log end as it was
 * when loading began, decoding each record with {@link GroupRecordSerde}. Control batches are
 * skipped; so are records whose key has an unknown version or type (written by a newer broker),
 * with a warning. A record that cannot be decoded stops the load with an exception naming the
 * partition and offset: a coordinator must not serve from state it could not rebuild.
 *
 * <p>Stateless; call it on the thread that owns the state being rebuilt.
 */
final class GroupLoader {

    private static final Logger log = LoggerFactory.getLogger(GroupLoader.class);
    private static final int READ_MAX_BYTES = 1 << 20;

    private GroupLoader() {
    }

    /**
     * Feeds every record of {@code partitionLog} to {@code replay}, in offset order.
     *
     * @return the number of records replayed
     * @throws IllegalStateException if a record is corrupt
     */
    static long replay(PartitionLog partitionLog, int partition, Consumer<GroupRecord> replay) {
        return replay(partitionLog, partition, new Replayer() {
            @Override
            public void record(GroupRecord record, long transactionalProducerId) {
                replay.accept(record);
            }

            @Override
            public void marker(long producerId, boolean commit) {
            }
        });
    }

    /** What a load does with the records: plain ones, those of a transaction, and transaction markers. */
    interface Replayer {
        /** A record; {@code transactionalProducerId} is the producer's id if it was written in a transaction, else -1. */
        void record(GroupRecord record, long transactionalProducerId);

        /** The end of {@code producerId}'s transaction on this partition. */
        void marker(long producerId, boolean commit);
    }

    /**
     * Feeds every record of {@code partitionLog} to {@code replayer}, in offset order, with the
     * transaction markers in between.
     *
     * @return the number of records replayed
     * @throws IllegalStateException if a record is corrupt
     */
    static long replay(PartitionLog partitionLog, int partition, Replayer replayer) {
        long endOffset = partitionLog.logEndOffset();
        long nextOffset = partitionLog.logStartOffset();
        long count = 0;
        while (nextOffset < endOffset) {
            FetchDataInfo read = partitionLog.read(nextOffset, READ_MAX_BYTES, true);
            long before = nextOffset;
            for (RecordBatch batch : read.records().batches()) {
                if (batch.lastOffset() < nextOffset) {
                    continue;
                }
                if (batch.isControlBatch()) {
                    for (Record record : batch) {
                        ControlRecordType type = ControlRecordType.parse(record.key());
                        if (type == ControlRecordType.COMMIT || type == ControlRecordType.ABORT) {
                            replayer.marker(batch.producerId(), type == ControlRecordType.COMMIT);
                        }
                    }
                } else {
                    long producerId = batch.isTransactional() ? batch.producerId() : -1;
                    for (Record record : batch) {
                        if (record.offset() >= nextOffset && record.offset() < endOffset) {
                            count += replayOne(record, partition, r -> replayer.record(r, producerId));
                        }
                    }
                }
                nextOffset = batch.nextOffset();
            }
            if (nextOffset == before) {
                break;
            }
        }
        return count;
    }

    private static int replayOne(Record record, int partition, Consumer<GroupRecord> replay) {
        Optional<GroupRecord> decoded;
        try {
            decoded = GroupRecordSerde.deserialize(record.key(), record.value());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("Corrupt record at offset " + record.offset() + " of "
                    + OffsetsTopic.NAME + "-" + partition + ": " + e.getMessage(), e);
        }
        if (decoded.isEmpty()) {
            log.warn("Skipping record at offset {} of {}-{}: unknown key version or type", record.offset(),
                    OffsetsTopic.NAME, partition);
            return 0;
        }
        replay.accept(decoded.get());
        return 1;
    }
}
