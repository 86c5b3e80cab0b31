package dev.millrace.broker.delay;

import java.util.Optional;

import org.apache.kafka.common.TopicPartition;

import dev.millrace.broker.log.PartitionLog;

/** The broker as the delay service sees it: topics, local logs and the leader epoch to stamp. Thread-safe. */
public interface DelayLogs {

    /** The number of partitions of {@code topic}, or -1 if it does not exist. */
    int partitionCount(String topic);

    /** The local log of {@code tp}, if this broker hosts it. */
    Optional<PartitionLog> log(TopicPartition tp);

    int leaderEpoch(TopicPartition tp);
}
