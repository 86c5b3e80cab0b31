package dev.millrace.broker.share;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidGroupIdException;

/**
 * Per-group settings of share groups, set with IncrementalAlterConfigs on a {@code GROUP} config
 * resource, as Kafka's group configs. These settings are known:
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
 *   <li>{@value #DELIVERY_COUNT_LIMIT} (1..{@value #MAX_DELIVERY_COUNT_LIMIT}; default the broker's
 *       {@code group.share.delivery.count.limit}): deliveries after which a released or expired record
 *       is archived and dead-lettered instead of made available again. The JMS provider sets it from
 *       its redelivery policy ({@code maxDeliveries}).</li>
 *   <li>{@value #REDELIVERY_BACKOFF_MS} and {@value #REDELIVERY_BACKOFF_MAX_MS} (ms, at least 0;
 *       defaults the broker's {@code group.share.redelivery.backoff.ms} and {@code .max.ms}): a released
 *       record becomes available again after {@code backoff * 2^(deliveryCount - 1)}, capped at the max.
 *       The effective backoff (the group's or else the broker's) must not exceed the effective max.</li>
 * </ul>
 *
 * <p>Where they live: in the cluster's metadata log, as Kafka keeps group configs. A change goes to the active
 * controller from whichever broker received it ({@code server/GroupConfigRouting}); the controller validates it with
 * {@link #change} (any other name, a bad value or an inconsistent backoff is INVALID_CONFIG naming the group, the
 * setting and the value), commits one {@code GroupConfigRecord} per changed setting, and every broker applies the
 * committed settings from its metadata image ({@link #update}). So every share-partition leader uses the same
 * settings, they survive the restart of every broker, and the change is answered once committed (other brokers apply
 * it as their image catches up, normally within milliseconds). A group need not exist to be configured (a queue can
 * be made to start at the earliest offset before its first consumer); deleting the share group keeps its settings.
 *
 * <p>Settings written by earlier versions into the share-state topic ({@link ShareStateSerde}, key version 1) are
 * still read: the broker moves them into the metadata log at start ({@code server/LegacyGroupConfigMigration}).
 *
 * <p>A change of the delivery count limit or the backoff applies at once to the group's existing
 * share-partitions (records already waiting out a backoff keep their time), through the listener of
 * {@link #onChange}.
 *
 * <p>Thread-safe: {@link #update} runs on the metadata thread, readers on any thread.
 */
public final class ShareGroupConfigs {

    public static final String AUTO_OFFSET_RESET = "share.auto.offset.reset";
    public static final String ISOLATION_LEVEL = "share.isolation.level";
    public static final String DELIVERY_COUNT_LIMIT = "share.delivery.count.limit";
    public static final String REDELIVERY_BACKOFF_MS = "share.redelivery.backoff.ms";
    public static final String REDELIVERY_BACKOFF_MAX_MS = "share.redelivery.backoff.max.ms";
    /** Kafka carries delivery counts as int16. */
    public static final int MAX_DELIVERY_COUNT_LIMIT = Short.MAX_VALUE;
    private static final List<String> KNOWN = List.of(AUTO_OFFSET_RESET, ISOLATION_LEVEL, DELIVERY_COUNT_LIMIT,
            REDELIVERY_BACKOFF_MS, REDELIVERY_BACKOFF_MAX_MS);

    private final ShareGroupConfig defaults;
    private final Map<String, Map<String, String>> overrides = new ConcurrentHashMap<>();
    private volatile Consumer<String> onChange = groupId -> { };
    /** The metadata index of the settings applied last; guarded by {@code this}. */
    private long appliedIndex = -1;

    public ShareGroupConfigs(ShareGroupConfig defaults) {
        this.defaults = Objects.requireNonNull(defaults, "defaults");
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

    /**
     * The share-group settings in force for {@code groupId}: the broker's, with the group's delivery count
     * limit and redelivery backoff where it sets them.
     */
    public ShareGroupConfig effective(String groupId) {
        Map<String, String> set = overrides(groupId);
        ShareGroupConfig config = defaults;
        String limit = set.get(DELIVERY_COUNT_LIMIT);
        if (limit != null) {
            config = config.withDeliveryCountLimit(Integer.parseInt(limit));
        }
        String backoff = set.get(REDELIVERY_BACKOFF_MS);
        String max = set.get(REDELIVERY_BACKOFF_MAX_MS);
        if (backoff != null || max != null) {
            config = config.withRedeliveryBackoff(
                    backoff != null ? Long.parseLong(backoff) : defaults.redeliveryBackoffMs(),
                    max != null ? Long.parseLong(max) : defaults.redeliveryBackoffMaxMs());
        }
        return config;
    }

    /** Called with the group id after each applied change; set once, before serving. */
    void onChange(Consumer<String> listener) {
        this.onChange = Objects.requireNonNull(listener, "listener");
    }

    /** The settings explicitly set on {@code groupId}. */
    public Map<String, String> overrides(String groupId) {
        return overrides.getOrDefault(groupId, Map.of());
    }

    /** Every known setting of {@code groupId}: its value and whether the group sets it (else the default). */
    public Map<String, Optional<String>> describe(String groupId) {
        Map<String, Optional<String>> out = new LinkedHashMap<>();
        for (String name : KNOWN) {
            out.put(name, Optional.ofNullable(overrides(groupId).get(name)));
        }
        return out;
    }

    /** The default value of a known setting. */
    public String defaultValue(String name) {
        return switch (name) {
            case ISOLATION_LEVEL -> "read_uncommitted";
            case DELIVERY_COUNT_LIMIT -> String.valueOf(defaults.deliveryCountLimit());
            case REDELIVERY_BACKOFF_MS -> String.valueOf(defaults.redeliveryBackoffMs());
            case REDELIVERY_BACKOFF_MAX_MS -> String.valueOf(defaults.redeliveryBackoffMaxMs());
            default -> defaults.autoOffsetResetEarliest() ? "earliest" : "latest";
        };
    }

    /** What a known setting means, for DescribeConfigs. */
    public static String documentation(String name) {
        return switch (name) {
            case ISOLATION_LEVEL -> "read_committed: acquire only committed records (below the last stable offset, "
                    + "never aborted ones); read_uncommitted: every record.";
            case DELIVERY_COUNT_LIMIT -> "Deliveries after which a released or expired record is archived and copied "
                    + "to the topic's millrace.share.dlq.topic instead of made available again (1.."
                    + MAX_DELIVERY_COUNT_LIMIT + ").";
            case REDELIVERY_BACKOFF_MS -> "A released record is available again after this * 2^(deliveryCount - 1) "
                    + "ms, capped at " + REDELIVERY_BACKOFF_MAX_MS + "; 0 redelivers at once.";
            case REDELIVERY_BACKOFF_MAX_MS -> "Longest redelivery backoff in ms.";
            default -> "Where a share group starts on a partition it has no state for: earliest (the log start) "
                    + "or latest (the high watermark).";
        };
    }

    /**
     * The group's whole settings once {@code set} (name to value) and {@code delete} (names back to the default) are
     * applied to {@code current}, values trimmed and lower-cased; all or nothing. The active controller's check of a
     * change (its {@code GroupConfigPolicy}).
     *
     * @throws InvalidGroupIdException for an empty group id
     * @throws InvalidConfigurationException naming the group, the setting and the value that is not valid
     */
    public Map<String, String> change(String groupId, Map<String, String> current, Map<String, String> set,
                                      Collection<String> delete) {
        if (groupId == null || groupId.isEmpty()) {
            throw new InvalidGroupIdException("The group id must not be empty");
        }
        Map<String, String> normalized = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : set.entrySet()) {
            Optional<String> error = validate(e.getKey(), e.getValue());
            if (error.isPresent()) {
                throw new InvalidConfigurationException("Group " + groupId + ": " + error.get());
            }
            normalized.put(e.getKey(), e.getValue().trim().toLowerCase(Locale.ROOT));
        }
        for (String name : delete) {
            if (!KNOWN.contains(name)) {
                throw new InvalidConfigurationException("Group " + groupId + ": unknown group config '" + name
                        + "' (known: " + String.join(", ", KNOWN) + ")");
            }
        }
        Map<String, String> next = new LinkedHashMap<>(current);
        delete.forEach(next::remove);
        next.putAll(normalized);
        Optional<String> inconsistent = checkBackoff(next);
        if (inconsistent.isPresent()) {
            throw new InvalidConfigurationException("Group " + groupId + ": " + inconsistent.get());
        }
        return next;
    }

    /**
     * Takes every group's settings as committed at metadata index {@code index} (by group id; a group absent has
     * none): the groups whose settings changed are told to the {@link #onChange} listener. An index not above the one
     * applied last is ignored, so the image read at start and the listener's images may arrive in any order.
     */
    public synchronized void update(long index, Map<String, Map<String, String>> all) {
        if (index <= appliedIndex) {
            return;
        }
        appliedIndex = index;
        Set<String> changed = new TreeSet<>();
        for (Map.Entry<String, Map<String, String>> e : all.entrySet()) {
            if (!e.getValue().equals(overrides.get(e.getKey()))) {
                overrides.put(e.getKey(), Map.copyOf(e.getValue()));
                changed.add(e.getKey());
            }
        }
        for (String groupId : List.copyOf(overrides.keySet())) {
            if (!all.containsKey(groupId)) {
                overrides.remove(groupId);
                changed.add(groupId);
            }
        }
        changed.forEach(onChange);
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
        if (DELIVERY_COUNT_LIMIT.equals(name)) {
            return checkRange(name, value, 1, MAX_DELIVERY_COUNT_LIMIT);
        }
        if (REDELIVERY_BACKOFF_MS.equals(name) || REDELIVERY_BACKOFF_MAX_MS.equals(name)) {
            return checkRange(name, value, 0, Long.MAX_VALUE);
        }
        return Optional.empty();
    }

    private static Optional<String> checkRange(String name, String value, long min, long max) {
        long parsed;
        try {
            parsed = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            return Optional.of(name + " must be a whole number, got '" + value + "'");
        }
        if (parsed < min || parsed > max) {
            return Optional.of(name + " must be " + min + ".." + max + ", got " + parsed);
        }
        return Optional.empty();
    }

    /** The backoff in force must not exceed the max in force, each the group's setting or else the broker's. */
    private Optional<String> checkBackoff(Map<String, String> next) {
        String backoff = next.get(REDELIVERY_BACKOFF_MS);
        String max = next.get(REDELIVERY_BACKOFF_MAX_MS);
        long backoffMs = backoff != null ? Long.parseLong(backoff) : defaults.redeliveryBackoffMs();
        long maxMs = max != null ? Long.parseLong(max) : defaults.redeliveryBackoffMaxMs();
        if (backoffMs > maxMs) {
            return Optional.of(REDELIVERY_BACKOFF_MS + " (" + backoffMs + (backoff != null ? "" : ", the broker's")
                    + ") must not exceed " + REDELIVERY_BACKOFF_MAX_MS + " (" + maxMs
                    + (max != null ? "" : ", the broker's") + ")");
        }
        return Optional.empty();
    }
}
