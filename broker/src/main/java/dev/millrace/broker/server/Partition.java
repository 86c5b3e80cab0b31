package dev.millrace.broker.server;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.log.PartitionLog;

/**
 * A partition this broker holds a replica of: its log and the leadership state from the metadata.
 * With one broker the leader is always this node and the high watermark is the log end; the fields
 * are kept so replication can fill them in.
 *
 * <p>Thread-safe: the log is; the metadata fields are replaced whole by the metadata thread.
 */
public final class Partition {

    private final TopicPartition topicPartition;
    private final Uuid topicId;
    private final PartitionLog log;
    private volatile PartitionImage state;

    Partition(TopicPartition topicPartition, Uuid topicId, PartitionLog log, PartitionImage state) {
        this.topicPartition = topicPartition;
        this.topicId = topicId;
        this.log = log;
        this.state = state;
    }

    public TopicPartition topicPartition() {
        return topicPartition;
    }

    public Uuid topicId() {
        return topicId;
    }

    public PartitionLog log() {
        return log;
    }

    public int leaderEpoch() {
        return state.leaderEpoch();
    }

    public int leaderId() {
        return state.leader();
    }

    public int isrSize() {
        return state.isr().size();
    }

    /** Offsets below this are replicated to the whole ISR; with a single replica, the log end. */
    public long highWatermark() {
        return log.logEndOffset();
    }

    /**
     * Offsets below this hold no open transaction: the first offset of the oldest open transaction
     * when there is one, capped by the high watermark. Read-committed consumers read only below it.
     */
    public long lastStableOffset() {
        long highWatermark = highWatermark();
        long firstUnstable = log.firstUnstableOffset();
        return firstUnstable < 0 ? highWatermark : Math.min(firstUnstable, highWatermark);
    }

    void updateState(PartitionImage newState) {
        this.state = newState;
    }
}
