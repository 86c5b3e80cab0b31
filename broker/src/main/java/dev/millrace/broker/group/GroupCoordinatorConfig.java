package dev.millrace.broker.group;

/**
 * The group coordinator's settings, named and defaulted like Kafka's broker settings of the same
 * meaning.
 *
 * @param initialRebalanceDelayMs {@code group.initial.rebalance.delay.ms}: how long the first
 *                                rebalance of an empty group waits for more members; each member that
 *                                joins meanwhile extends the wait by this much, up to the group's
 *                                rebalance timeout. 0 completes the first join as soon as every
 *                                known member has joined.
 * @param minSessionTimeoutMs     {@code group.min.session.timeout.ms}: the smallest session timeout a
 *                                member may ask for
 * @param maxSessionTimeoutMs     {@code group.max.session.timeout.ms}: the largest one
 * @param maxGroupSize            {@code group.max.size}: members (joined or holding an issued member
 *                                id) per group
 * @param maxMetadataBytes        {@code offset.metadata.max.bytes}: the longest metadata string a
 *                                committed offset may carry, in UTF-8 bytes
 */
public record GroupCoordinatorConfig(int initialRebalanceDelayMs, int minSessionTimeoutMs, int maxSessionTimeoutMs,
                                     int maxGroupSize, int maxMetadataBytes) {

    public static final int DEFAULT_INITIAL_REBALANCE_DELAY_MS = 3000;
    public static final int DEFAULT_MIN_SESSION_TIMEOUT_MS = 6000;
    public static final int DEFAULT_MAX_SESSION_TIMEOUT_MS = 1_800_000;
    public static final int DEFAULT_MAX_GROUP_SIZE = Integer.MAX_VALUE;
    public static final int DEFAULT_MAX_METADATA_BYTES = 4096;

    public GroupCoordinatorConfig {
        checkNotNegative(initialRebalanceDelayMs, "initialRebalanceDelayMs");
        checkNotNegative(minSessionTimeoutMs, "minSessionTimeoutMs");
        checkNotNegative(maxMetadataBytes, "maxMetadataBytes");
        if (maxSessionTimeoutMs < minSessionTimeoutMs) {
            throw new IllegalArgumentException("maxSessionTimeoutMs (" + maxSessionTimeoutMs
                    + ") must be at least minSessionTimeoutMs (" + minSessionTimeoutMs + ")");
        }
        if (maxGroupSize < 1) {
            throw new IllegalArgumentException("maxGroupSize must be at least 1, got " + maxGroupSize);
        }
    }

    /** Kafka's defaults. */
    public static GroupCoordinatorConfig defaults() {
        return new GroupCoordinatorConfig(DEFAULT_INITIAL_REBALANCE_DELAY_MS, DEFAULT_MIN_SESSION_TIMEOUT_MS,
                DEFAULT_MAX_SESSION_TIMEOUT_MS, DEFAULT_MAX_GROUP_SIZE, DEFAULT_MAX_METADATA_BYTES);
    }

    /** These settings with another {@code group.initial.rebalance.delay.ms}. */
    public GroupCoordinatorConfig withInitialRebalanceDelayMs(int delayMs) {
        return new GroupCoordinatorConfig(delayMs, minSessionTimeoutMs, maxSessionTimeoutMs, maxGroupSize,
                maxMetadataBytes);
    }

    private static void checkNotNegative(int value, String name) {
        if (value < 0) {
            throw new IllegalArgumentException(name + " must not be negative, got " + value);
        }
    }
}
