package dev.millrace.broker.txn;

import java.util.Map;

import org.apache.kafka.common.record.internal.RecordBatch;

import dev.millrace.broker.log.PartitionLog;
import dev.millrace.protocol.ext.XaXid;

/**
 * Rebuilds the transactional ids and XA branches of one {@code __transaction_state} partition from its local log,
 * from the log start to the log end (records above the high watermark included: a new leader's log end becomes
 * committed as its followers catch up, and the coordinator waits for that before it acts on them). The last record of
 * a key (an id, or a branch's Xid) wins; a tombstone removes it. Stateless.
 */
final class TxnLogLoader {

    private static final int READ_MAX_BYTES = 1 << 20;

    private TxnLogLoader() {
    }

    /**
     * Replays {@code partitionLog} into {@code txns} and {@code branches}; returns the number of records read.
     *
     * @throws IllegalStateException naming the offset and partition of a record that cannot be decoded
     */
    static long replay(PartitionLog partitionLog, int partition, Map<String, TransactionMetadata> txns,
                       Map<XaXid, XaBranch> branches) {
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
                            TxnLogRecordSerde.Key key = TxnLogRecordSerde.deserializeAnyKey(record.key());
                            if (key.xid() != null) {
                                if (record.hasValue()) {
                                    branches.put(key.xid(), TxnLogRecordSerde.deserializeBranchValue(key.xid(),
                                            record.value()));
                                } else {
                                    branches.remove(key.xid());
                                }
                            } else if (record.hasValue()) {
                                String id = key.transactionalId();
                                txns.put(id, TxnLogRecordSerde.deserializeValue(id, record.value()));
                            } else {
                                txns.remove(key.transactionalId());
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
