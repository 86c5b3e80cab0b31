package dev.millrace.broker.coordinator;

import org.apache.kafka.common.TopicPartition;

/**
 * Hears which partitions, of every topic, this broker leads: as {@link CoordinatorElection} (same order, same
 * threading: called on the metadata applying thread, must not block), for state that follows the leadership of user
 * topics' partitions (share-partitions live on the leader of their topic-partition).
 */
public interface LeadershipListener {

    /** This broker now leads {@code tp} in {@code leaderEpoch}. */
    void onElected(TopicPartition tp, int leaderEpoch);

    /** This broker no longer leads {@code tp}; {@code leaderEpoch} is the epoch that ended. */
    void onResigned(TopicPartition tp, int leaderEpoch);
}
