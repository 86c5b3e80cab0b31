package dev.millrace.broker.group;

import dev.millrace.broker.log.PartitionLog;

/**
 * The coordinator's view of the internal compacted topic {@code __consumer_offsets}, where committed
 * offsets and group metadata live (record layout in {@link GroupRecordSerde}). Group {@code g} is
 * owned by partition {@code Utils.abs(g.hashCode()) % partitionCount()}; each partition is one
 * {@link GroupShard} of the coordinator.
 *
 * <p>Implemented by the broker over its partition logs. The partition count must not change while
 * a coordinator uses the topic: it decides where every group lives. Implementations are thread-safe.
 */
public interface OffsetsTopic {

    /** The name Kafka clients and tools know the topic by. */
    String NAME = "__consumer_offsets";

    /** The number of partitions, fixed for the topic's lifetime; at least 1. */
    int partitionCount();

    /** The local log of {@code partition}, 0 &lt;= partition &lt; {@link #partitionCount()}; never null. */
    PartitionLog log(int partition);

    /** The leader epoch stamped on the coordinator's appends to {@code partition}. */
    default int leaderEpoch(int partition) {
        return 0;
    }
}
