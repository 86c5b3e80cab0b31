package dev.millrace.broker.share;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;

/**
 * Per-group settings of share groups, set with IncrementalAlterConfigs on a {@code GROUP} config
 * resource, as Kafka's group configs. Two settings are known:
 *
 * <ul>
 *   <li>{@value #AUTO_OFFSET_RESET} ({@code earliest} or {@code latest}; default: the broker's
 *       {@code group.share.auto.offset.reset}): where the group starts on a partition it has no state
 *       for yet. Changing it does not move partitions the group already reads; reset those with
 *       AlterShareGroupOffsets.</li>
 *   <li>{@value #ISOLATION_LEVEL} ({@code read_committed} or {@code read_uncommitted}; default
 *       {@code read_uncommitted}, as Kafka): with read_committed the group acquires only records
 *       below the last stable offset and never those of aborted transactions
 *       ({@link IsolatedShareLog}). JMS queues use read_committed.</li>
 * </ul>
 *
 * Any other name is INVALID_CONFIG naming it. A group need not exist to be configured (a queue can be
 * made to start at the earliest offset before its first consumer). Settings are saved through the
 * {@link ShareStateStore} before the change is answered and survive a restart; deleting the share
 * group keeps them.
 *
 * <p>Thread-safe: changes of one group are serialised on this object.
 */
public final class ShareGroupConfigs {

    public static final String AUTO_OFFSET_RESET = "share.auto.offset.reset";
    public static final String ISOLATION_LEVEL = "share.isolation.level";
    private static final java.util.List<String> KNOWN = java.util.List.of(AUTO_OFFSET_RESET, ISOLATION_LEVEL);

    private final ShareGroupConfig defaults;
    private final ShareStateStore store;
    private final Map<String, Map<String, String>> overrides = new ConcurrentHashMap<>();

    public ShareGroupConfigs(ShareGroupConfig defaults, ShareStateStore store) {
        this.defaults = Objects.requireNonNull(defaults, "defaults");
        this.store = Objects.requireNonNull(store, "store");
        store.groupConfigs().forEach((group, configs) -> overrides.put(group, Map.copyOf(configs)));
    }

    /** Whether {@code groupId} starts new partitions at the log start rather than at the high watermark. */
    public boolean autoOffsetResetEarliest(String groupId) {
        String value = overrides.getOrDefault(groupId, Map.of()).get(AUTO_OFFSET_RESET);
        return value == null ? defaults.autoOffsetResetEarliest() : ShareGroupConfig.parseEarliest(value);
    }

    /** Whether {@code groupId} reads committed records only ({@value #ISOLATION_LEVEL}=read_committed). */
    public boolean readCommitted(String groupId) {
        return "read_committed".equals(overrides.getOrDefault(groupId, Map.of()).get(ISOLATION_LEVEL));
    }

    /** The settings explicitly set on {@code groupId}. */
    public Map<String, String> overrides(String groupId) {
        return overrides.getOrDefault(groupId, Map.of());
    }

    /** Every known setting of {@code groupId}: its value and whether the group sets it (else the default). */
    public Map<String, Optional<String>> describe(String groupId) {
        Map<String, Optional<String>> out = new LinkedHashMap<>();
        out.put(AUTO_OFFSET_RESET, Optional.ofNullable(overrides(groupId).get(AUTO_OFFSET_RESET)));
        out.put(ISOLATION_LEVEL, Optional.ofNullable(overrides(groupId).get(ISOLATION_LEVEL)));
        return out;
    }

    /** The default value of a known setting. */
    public String defaultValue(String name) {
        if (ISOLATION_LEVEL.equals(name)) {
            return "read_uncommitted";
        }
        return defaults.autoOffsetResetEarliest() ? "earliest" : "latest";
    }

    /**
     * Validates and, unless {@code validateOnly}, applies and saves {@code set} (name to value) and
     * {@code delete} (names back to the default) for {@code groupId}, all or nothing.
     */
    public synchronized ApiError alter(String groupId, Map<String, String> set, Collection<String> delete,
                                       boolean validateOnly) {
        if (groupId == null || groupId.isEmpty()) {
            return new ApiError(Errors.INVALID_GROUP_ID, "The group id must not be empty");
        }
        Map<String, String> normalized = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : set.entrySet()) {
            Optional<String> error = validate(e.getKey(), e.getValue());
            if (error.isPresent()) {
                return new ApiError(Errors.INVALID_CONFIG, "Group " + groupId + ": " + error.get());
            }
            normalized.put(e.getKey(), e.getValue().toLowerCase(Locale.ROOT));
        }
        for (String name : delete) {
            if (!KNOWN.contains(name)) {
                return new ApiError(Errors.INVALID_CONFIG, "Group " + groupId + ": unknown group config '" + name
                        + "' (known: " + String.join(", ", KNOWN) + ")");
            }
        }
        if (validateOnly) {
            return ApiError.NONE;
        }
        Map<String, String> next = new LinkedHashMap<>(overrides(groupId));
        delete.forEach(next::remove);
        next.putAll(normalized);
        store.saveGroupConfig(groupId, next);
        if (next.isEmpty()) {
            overrides.remove(groupId);
        } else {
            overrides.put(groupId, Map.copyOf(next));
        }
        return ApiError.NONE;
    }

    private static Optional<String> validate(String name, String value) {
        if (!KNOWN.contains(name)) {
            return Optional.of("unknown group config '" + name + "' (known: " + String.join(", ", KNOWN) + ")");
        }
        if (value == null) {
            return Optional.of(name + " has a null value; delete it to return to the default");
        }
        String v = value.toLowerCase(Locale.ROOT);
        if (AUTO_OFFSET_RESET.equals(name) && !v.equals("earliest") && !v.equals("latest")) {
            return Optional.of(name + " must be earliest or latest, got '" + value + "'");
        }
        if (ISOLATION_LEVEL.equals(name) && !v.equals("read_committed") && !v.equals("read_uncommitted")) {
            return Optional.of(name + " must be read_committed or read_uncommitted, got '" + value + "'");
        }
        return Optional.empty();
    }
}
