package dev.millrace.broker.log;

import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.ValidList;
import org.apache.kafka.common.config.ConfigDef.ValidString;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;

/**
 * The per-partition log settings, under the names Kafka uses for topic configs so that the Admin
 * client can describe and alter them unchanged. Each setting is declared once below with its type,
 * default, validator and documentation; {@link #DEFINITION} is the source for generated docs.
 *
 * <p>Invalid values are rejected when the config is built, with a {@link ConfigException} whose
 * message names the setting, the value and the allowed range. Instances are immutable and
 * thread-safe; a config change replaces the instance held by the log.
 *
 * <p>Decisions where Kafka leaves room:
 * <ul>
 *   <li>{@code flush.messages=1} means "fsync before acknowledging every append"; concurrent
 *       appenders then share fsyncs (group commit, see {@link GroupCommit}).</li>
 *   <li>Compaction needs a key on every record; a keyless record in a compacted log is rejected
 *       at append, as Kafka does.</li>
 *   <li>Tombstones survive compaction until {@code delete.retention.ms} after the first cleaning
 *       that saw them (the batch's delete horizon, KIP-534).</li>
 * </ul>
 */
public final class LogConfig extends AbstractConfig {

    public static final String SEGMENT_BYTES = "segment.bytes";
    public static final String SEGMENT_MS = "segment.ms";
    public static final String SEGMENT_INDEX_BYTES = "segment.index.bytes";
    public static final String INDEX_INTERVAL_BYTES = "index.interval.bytes";
    public static final String MAX_MESSAGE_BYTES = "max.message.bytes";
    public static final String FLUSH_MESSAGES = "flush.messages";
    public static final String FLUSH_MS = "flush.ms";
    public static final String RETENTION_MS = "retention.ms";
    public static final String RETENTION_BYTES = "retention.bytes";
    public static final String CLEANUP_POLICY = "cleanup.policy";
    public static final String DELETE_RETENTION_MS = "delete.retention.ms";
    public static final String MESSAGE_TIMESTAMP_TYPE = "message.timestamp.type";
    public static final String FILE_DELETE_DELAY_MS = "file.delete.delay.ms";
    public static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";
    /** Millrace: the topic that share groups copy rejected and over-delivered records of this topic to. */
    public static final String SHARE_DLQ_TOPIC = "millrace.share.dlq.topic";
    /** Millrace: where JMS consumers move expired messages of this topic; the broker only keeps it. */
    public static final String EXPIRY_TOPIC = "millrace.expiry.topic";

    public static final String CLEANUP_POLICY_DELETE = "delete";
    public static final String CLEANUP_POLICY_COMPACT = "compact";

    private static final long DAY_MS = 24L * 60 * 60 * 1000;

    /** Every log setting with its type, default, validator and documentation. */
    public static final ConfigDef DEFINITION = new ConfigDef()
            .define(SEGMENT_BYTES, Type.INT, 1024 * 1024 * 1024, Range.atLeast(DefaultRecordBatch.RECORD_BATCH_OVERHEAD),
                    Importance.MEDIUM, "Size of a segment file in bytes; a new segment is rolled when the next batch would not fit.")
            .define(SEGMENT_MS, Type.LONG, 7 * DAY_MS, Range.atLeast(1), Importance.MEDIUM,
                    "A segment is rolled once its first batch's timestamp is older than this, even if it is not full.")
            .define(SEGMENT_INDEX_BYTES, Type.INT, 10 * 1024 * 1024, Range.atLeast(OffsetIndex.ENTRY_SIZE * 2 + TimeIndex.ENTRY_SIZE), Importance.MEDIUM,
                    "Maximum size of a segment's offset index and of its time index; a full index rolls the segment.")
            .define(INDEX_INTERVAL_BYTES, Type.INT, 4096, Range.atLeast(0), Importance.MEDIUM,
                    "Bytes of batches between two entries of the sparse offset and time indexes.")
            .define(MAX_MESSAGE_BYTES, Type.INT, 1024 * 1024 + DefaultRecordBatch.RECORD_BATCH_OVERHEAD, Range.atLeast(0),
                    Importance.MEDIUM, "Largest record batch the log accepts, in bytes, after compression.")
            .define(FLUSH_MESSAGES, Type.LONG, Long.MAX_VALUE, Range.atLeast(1), Importance.MEDIUM,
                    "Fsync once this many messages are unflushed; 1 fsyncs before every append returns.")
            .define(FLUSH_MS, Type.LONG, Long.MAX_VALUE, Range.atLeast(0), Importance.MEDIUM,
                    "Fsync once the oldest unflushed message is older than this (checked by the log maintenance task).")
            .define(RETENTION_MS, Type.LONG, 7 * DAY_MS, Range.atLeast(-1), Importance.MEDIUM,
                    "Delete a segment once its newest record is older than this; -1 keeps segments forever.")
            .define(RETENTION_BYTES, Type.LONG, -1L, Range.atLeast(-1), Importance.MEDIUM,
                    "Delete the oldest segments while the log is larger than this; -1 sets no limit.")
            .define(CLEANUP_POLICY, Type.LIST, CLEANUP_POLICY_DELETE,
                    ValidList.in(false, CLEANUP_POLICY_DELETE, CLEANUP_POLICY_COMPACT), Importance.MEDIUM,
                    "'delete' applies retention, 'compact' keeps the latest value per key; both may be given.")
            .define(DELETE_RETENTION_MS, Type.LONG, DAY_MS, Range.atLeast(0), Importance.MEDIUM,
                    "How long a tombstone survives compaction after the first cleaning that saw it.")
            .define(MESSAGE_TIMESTAMP_TYPE, Type.STRING, "CreateTime", ValidString.in("CreateTime", "LogAppendTime"),
                    Importance.MEDIUM, "Keep the producer's timestamps (CreateTime) or stamp batches with the broker's clock (LogAppendTime).")
            .define(FILE_DELETE_DELAY_MS, Type.LONG, 60_000L, Range.atLeast(0), Importance.LOW,
                    "Delay between removing a segment from the log and deleting its files, so in-flight reads finish.")
            .define(MIN_INSYNC_REPLICAS, Type.INT, 1, Range.atLeast(1), Importance.MEDIUM,
                    "Replicas that must have an acks=all write before it is acknowledged (used by replication).")
            .define(SHARE_DLQ_TOPIC, Type.STRING, "", Importance.MEDIUM,
                    "Millrace: dead-letter topic for share groups reading this topic. A record a member rejects, or "
                    + "one released or expired group.share.delivery.count.limit times, is archived and copied "
                    + "there with millrace.dlq.* headers (see ShareDeadLetterHeaders). Empty: no copy.")
            .define(EXPIRY_TOPIC, Type.STRING, "", Importance.MEDIUM,
                    "Millrace: expiry queue of this topic, read by the JMS provider: a consumer that finds a message "
                    + "past its JMSExpiration copies it there (with millrace.expiry.* headers) before "
                    + "acknowledging it, instead of only dropping it. The broker does not act on it. Empty: "
                    + "expired messages are dropped.");

    private static final LogConfig DEFAULTS = new LogConfig(Map.of());

    private final int segmentBytes;
    private final long segmentMs;
    private final int segmentIndexBytes;
    private final int indexIntervalBytes;
    private final int maxMessageBytes;
    private final long flushMessages;
    private final long flushMs;
    private final long retentionMs;
    private final long retentionBytes;
    private final boolean compact;
    private final boolean delete;
    private final long deleteRetentionMs;
    private final TimestampType timestampType;
    private final long fileDeleteDelayMs;
    private final int minInsyncReplicas;

    /**
     * @param props setting name to value, as strings or typed values; absent settings take their default
     * @throws ConfigException naming the first invalid or unknown setting
     */
    public LogConfig(Map<String, ?> props) {
        super(DEFINITION, props, false);
        for (String name : props.keySet()) {
            if (!DEFINITION.names().contains(name)) {
                throw new ConfigException("Unknown log setting '" + name + "'; known settings are " + DEFINITION.names());
            }
        }
        segmentBytes = getInt(SEGMENT_BYTES);
        segmentMs = getLong(SEGMENT_MS);
        segmentIndexBytes = getInt(SEGMENT_INDEX_BYTES);
        indexIntervalBytes = getInt(INDEX_INTERVAL_BYTES);
        maxMessageBytes = getInt(MAX_MESSAGE_BYTES);
        flushMessages = getLong(FLUSH_MESSAGES);
        flushMs = getLong(FLUSH_MS);
        retentionMs = getLong(RETENTION_MS);
        retentionBytes = getLong(RETENTION_BYTES);
        List<String> policies = getList(CLEANUP_POLICY);
        if (policies.isEmpty()) {
            throw new ConfigException(CLEANUP_POLICY, "", "must name 'delete', 'compact' or both");
        }
        compact = policies.stream().anyMatch(p -> p.toLowerCase(Locale.ROOT).equals(CLEANUP_POLICY_COMPACT));
        delete = policies.stream().anyMatch(p -> p.toLowerCase(Locale.ROOT).equals(CLEANUP_POLICY_DELETE));
        deleteRetentionMs = getLong(DELETE_RETENTION_MS);
        timestampType = getString(MESSAGE_TIMESTAMP_TYPE).equals("LogAppendTime")
                ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME;
        fileDeleteDelayMs = getLong(FILE_DELETE_DELAY_MS);
        minInsyncReplicas = getInt(MIN_INSYNC_REPLICAS);
    }

    /** The configuration with every setting at its default. */
    public static LogConfig defaults() {
        return DEFAULTS;
    }

    /** A copy of this config with the given settings changed. */
    public LogConfig with(Map<String, ?> overrides) {
        Map<String, Object> merged = new java.util.HashMap<>(originals());
        merged.putAll(overrides);
        return new LogConfig(merged);
    }

    public int segmentBytes() {
        return segmentBytes;
    }

    public long segmentMs() {
        return segmentMs;
    }

    public int segmentIndexBytes() {
        return segmentIndexBytes;
    }

    public int indexIntervalBytes() {
        return indexIntervalBytes;
    }

    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    public long flushMessages() {
        return flushMessages;
    }

    public long flushMs() {
        return flushMs;
    }

    public long retentionMs() {
        return retentionMs;
    }

    public long retentionBytes() {
        return retentionBytes;
    }

    public boolean compact() {
        return compact;
    }

    public boolean delete() {
        return delete;
    }

    public long deleteRetentionMs() {
        return deleteRetentionMs;
    }

    public TimestampType timestampType() {
        return timestampType;
    }

    public long fileDeleteDelayMs() {
        return fileDeleteDelayMs;
    }

    public int minInsyncReplicas() {
        return minInsyncReplicas;
    }

    /** {@code millrace.share.dlq.topic}; empty when the topic has no dead-letter topic. */
    public String shareDeadLetterTopic() {
        return getString(SHARE_DLQ_TOPIC);
    }
}
