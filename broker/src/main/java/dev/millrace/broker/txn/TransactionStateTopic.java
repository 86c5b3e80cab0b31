package dev.millrace.broker.txn;

import org.apache.kafka.common.utils.Utils;

import dev.millrace.broker.log.PartitionLog;

/**
 * The coordinator's view of the internal compacted topic {@code __transaction_state} (record layout
 * in {@link TxnLogRecordSerde}). Transactional id {@code t} lives in partition
 * {@code Utils.abs(t.hashCode()) % partitionCount()}, as in Kafka. Implemented by the broker over
 * its partition logs; thread-safe.
 */
public interface TransactionStateTopic {

    String NAME = "__transaction_state";

    int partitionCount();

    /** The local log of {@code partition}; never null. */
    PartitionLog log(int partition);

    default int leaderEpoch(int partition) {
        return 0;
    }

    default int partitionFor(String transactionalId) {
        return Utils.abs(transactionalId.hashCode()) % partitionCount();
    }
}
