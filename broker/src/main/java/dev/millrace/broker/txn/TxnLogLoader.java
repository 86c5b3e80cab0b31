package dev.millrace.broker.txn;

import java.util.Map;

import org.apache.kafka.common.record.internal.RecordBatch;

import dev.millrace.broker.log.PartitionLog;

/**
 * Rebuilds the transactional ids of one {@code __transaction_state} partition from its local log, from the log start
 * to the log end (records above the high watermark included: a new leader's log end becomes committed as its
 * followers catch up, and the coordinator waits for that before it acts on them). The last record of an id wins; a
 * tombstone removes it. Stateless.
 */
final class TxnLogLoader {

    private static final int READ_MAX_BYTES = 1 << 20;

    private TxnLogLoader() {
    }

    /**
     * Replays {@code partitionLog} into {@code txns}; returns the number of records read.
     *
     * @throws IllegalStateException naming the offset and partition of a record that cannot be decoded
     */
    static long replay(PartitionLog partitionLog, int partition, Map<String, TransactionMetadata> txns) {
        long end = partitionLog.logEndOffset();
        long next = partitionLog.logStartOffset();
        long count = 0;
        while (next < end) {
            long before = next;
            for (RecordBatch batch : partitionLog.read(next, READ_MAX_BYTES, true).records().batches()) {
                if (batch.lastOffset() < next) {
                    continue;
                }
                if (!batch.isControlBatch()) {
                    for (var record : batch) {
                        if (record.offset() < next || record.offset() >= end) {
                            continue;
                        }
                        try {
                            String id = TxnLogRecordSerde.deserializeKey(record.key());
                            if (record.hasValue()) {
                                txns.put(id, TxnLogRecordSerde.deserializeValue(id, record.value()));
                            } else {
                                txns.remove(id);
                            }
                            count++;
                        } catch (IllegalArgumentException e) {
                            throw new IllegalStateException("Corrupt record at offset " + record.offset() + " of "
                                    + TransactionStateTopic.NAME + "-" + partition + ": " + e.getMessage(), e);
                        }
                    }
                }
                next = batch.nextOffset();
            }
            if (next == before) {
                break;
            }
        }
        return count;
    }
}
