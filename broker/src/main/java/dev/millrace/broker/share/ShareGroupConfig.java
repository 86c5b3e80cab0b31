package dev.millrace.broker.share;

import java.util.Locale;

/**
 * Share-group settings, from the broker configuration (names as Kafka's broker settings where Kafka
 * has one):
 *
 * <ul>
 *   <li>{@code group.share.record.lock.duration.ms} (30000): how long an acquired record stays
 *       locked to its member before it becomes available again.</li>
 *   <li>{@code group.share.partition.max.record.locks} (2000): most in-flight offsets per
 *       share-partition (from the start offset to the end offset); no new records are acquired
 *       beyond that window until the start offset moves.</li>
 *   <li>{@code group.share.selective.window.records} (1000000), Millrace extension: the window for members with a
 *       JMS selector, which pass over records they do not match. Records no member matches stay available at the
 *       head of the queue (JMS semantics) and pin the start offset; with the lock window alone a selective member
 *       would stop finding matches once that many unmatched records piled up. Records passed over unmatched take no
 *       memory (see {@link SharePartition}). Records a
 *       selective scan put in flight may be acquired by any member, so with selective members a partition can hold
 *       up to this many locks rather than {@code max.record.locks}.</li>
 *   <li>{@code group.share.delivery.count.limit} (5): deliveries after which a released or expired
 *       record is archived (and dead-lettered) instead of made available again.</li>
 *   <li>{@code group.share.session.timeout.ms} (45000) and {@code group.share.heartbeat.interval.ms}
 *       (5000): a member that sends no heartbeat for the session timeout is removed.</li>
 *   <li>{@code group.share.auto.offset.reset} ({@code latest}, as Kafka's group config
 *       {@code share.auto.offset.reset}): where a share-partition starts when the group first reads
 *       it. Millrace extension as a broker setting; queues that must see messages sent before the
 *       first consumer want {@code earliest}.</li>
 *   <li>{@code group.share.redelivery.backoff.ms} (0) and {@code group.share.redelivery.backoff.max.ms}
 *       (60000), Millrace extensions: a released or expired record becomes available again only after
 *       {@code backoff * 2^(deliveryCount - 1)}, capped at the max; 0 redelivers at once, as Kafka does.</li>
 * </ul>
 *
 * <p>Immutable.
 */
public record ShareGroupConfig(long recordLockDurationMs, int maxRecordLocks, int deliveryCountLimit,
                               int sessionTimeoutMs, int heartbeatIntervalMs, boolean autoOffsetResetEarliest,
                               long redeliveryBackoffMs, long redeliveryBackoffMaxMs, int selectiveWindowRecords) {

    public ShareGroupConfig {
        requirePositive(recordLockDurationMs, "group.share.record.lock.duration.ms");
        requirePositive(maxRecordLocks, "group.share.partition.max.record.locks");
        requirePositive(deliveryCountLimit, "group.share.delivery.count.limit");
        requirePositive(sessionTimeoutMs, "group.share.session.timeout.ms");
        requirePositive(heartbeatIntervalMs, "group.share.heartbeat.interval.ms");
        if (selectiveWindowRecords < maxRecordLocks) {
            throw new IllegalArgumentException("group.share.selective.window.records must be at least "
                    + "group.share.partition.max.record.locks (" + maxRecordLocks + "), got " + selectiveWindowRecords);
        }
        if (redeliveryBackoffMs < 0 || redeliveryBackoffMaxMs < redeliveryBackoffMs) {
            throw new IllegalArgumentException("group.share.redelivery.backoff.ms must be >= 0 and at most "
                    + "group.share.redelivery.backoff.max.ms, got " + redeliveryBackoffMs + " and "
                    + redeliveryBackoffMaxMs);
        }
    }

    /** Kafka's defaults, with no redelivery backoff. */
    public static ShareGroupConfig defaults() {
        return new ShareGroupConfig(30_000, 2000, 5, 45_000, 5000, false, 0, 60_000, 1_000_000);
    }

    /** Parses {@code earliest} / {@code latest} for {@code group.share.auto.offset.reset}. */
    public static boolean parseEarliest(String autoOffsetReset) {
        return switch (autoOffsetReset.toLowerCase(Locale.ROOT)) {
            case "earliest" -> true;
            case "latest" -> false;
            default -> throw new IllegalArgumentException("group.share.auto.offset.reset must be earliest or "
                    + "latest, got " + autoOffsetReset);
        };
    }

    /** How long a record released after {@code deliveryCount} deliveries waits before it is available. */
    public long redeliveryDelayMs(int deliveryCount) {
        if (redeliveryBackoffMs == 0) {
            return 0;
        }
        int doublings = Math.min(Math.max(deliveryCount - 1, 0), 30);
        return Math.min(redeliveryBackoffMaxMs, redeliveryBackoffMs << doublings);
    }

    public ShareGroupConfig withRecordLockDurationMs(long ms) {
        return new ShareGroupConfig(ms, maxRecordLocks, deliveryCountLimit, sessionTimeoutMs, heartbeatIntervalMs,
                autoOffsetResetEarliest, redeliveryBackoffMs, redeliveryBackoffMaxMs, selectiveWindowRecords);
    }

    public ShareGroupConfig withSelectiveWindowRecords(int records) {
        return new ShareGroupConfig(recordLockDurationMs, maxRecordLocks, deliveryCountLimit, sessionTimeoutMs,
                heartbeatIntervalMs, autoOffsetResetEarliest, redeliveryBackoffMs, redeliveryBackoffMaxMs, records);
    }

    public ShareGroupConfig withMaxRecordLocks(int locks) {
        return new ShareGroupConfig(recordLockDurationMs, locks, deliveryCountLimit, sessionTimeoutMs,
                heartbeatIntervalMs, autoOffsetResetEarliest, redeliveryBackoffMs, redeliveryBackoffMaxMs, selectiveWindowRecords);
    }

    public ShareGroupConfig withDeliveryCountLimit(int limit) {
        return new ShareGroupConfig(recordLockDurationMs, maxRecordLocks, limit, sessionTimeoutMs,
                heartbeatIntervalMs, autoOffsetResetEarliest, redeliveryBackoffMs, redeliveryBackoffMaxMs, selectiveWindowRecords);
    }

    public ShareGroupConfig withSessionTimeoutMs(int ms) {
        return new ShareGroupConfig(recordLockDurationMs, maxRecordLocks, deliveryCountLimit, ms,
                heartbeatIntervalMs, autoOffsetResetEarliest, redeliveryBackoffMs, redeliveryBackoffMaxMs, selectiveWindowRecords);
    }

    public ShareGroupConfig withAutoOffsetResetEarliest(boolean earliest) {
        return new ShareGroupConfig(recordLockDurationMs, maxRecordLocks, deliveryCountLimit, sessionTimeoutMs,
                heartbeatIntervalMs, earliest, redeliveryBackoffMs, redeliveryBackoffMaxMs, selectiveWindowRecords);
    }

    public ShareGroupConfig withRedeliveryBackoff(long backoffMs, long maxMs) {
        return new ShareGroupConfig(recordLockDurationMs, maxRecordLocks, deliveryCountLimit, sessionTimeoutMs,
                heartbeatIntervalMs, autoOffsetResetEarliest, backoffMs, maxMs, selectiveWindowRecords);
    }

    private static void requirePositive(long value, String name) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }
}
