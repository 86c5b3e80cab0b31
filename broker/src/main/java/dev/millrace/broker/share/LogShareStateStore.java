package dev.millrace.broker.share;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.delay.Time;

/**
 * Share-partition state in the internal compacted topic {@value #TOPIC}: per share-partition its latest full value
 * and the deltas saved since ({@link ShareStateSerde}; a partition with a large in-flight state saves deltas,
 * {@link SharePartition#encodedState()}); the share-partition of group {@code g} lives in
 * partition {@code abs(g.hashCode()) % partitionCount}. {@link #loadPartition} replays one partition (the
 * share-state coordinator does when elected its leader, {@link ShareStateCoordinator}; {@link #load()} replays all,
 * on one node) and {@link #unloadPartition} forgets it; the latest full value and the deltas since of each
 * share-partition of the loaded partitions are kept in memory
 * (encoded) for {@link #load(SharePartitionKey)}, which applies the deltas in version order. A full value is appended
 * in one batch with tombstones for the deltas it replaces.
 *
 * <p>Every state change is written before the request that caused it is answered (the partition's
 * listener calls {@link #save} on the request thread; a ShareFetch saves each partition once for its acknowledgements
 * and its acquisition together, {@link StateSaves}), so after a restart no accepted record is
 * redelivered and no unaccepted one is lost. A lock held at the crash is not persisted as held: the
 * record comes back available with its delivery count. A save takes the partition's state and appends it under the
 * lock of its {@value #TOPIC} partition, so saves of one share-partition are written in the order they were taken (a
 * delta relies on the one before it); a save that fails to append makes the partition's next save a full value.
 *
 * <p>Thread-safe. Writes to one partition of {@value #TOPIC} are serialised on a lock of that
 * partition (the version check, the append and the in-memory copy together), so groups that hash to
 * different partitions save in parallel.
 */
public final class LogShareStateStore implements ShareStateStore {

    /** The internal topic holding share-partition state. */
    public static final String TOPIC = "__share_group_state";

    private static final Logger log = LoggerFactory.getLogger(LogShareStateStore.class);
    private static final int READ_BYTES = 1024 * 1024;

    private record Id(String groupId, org.apache.kafka.common.Uuid topicId, int partition) {
    }

    private final ShareTopics topics;
    private final int partitionCount;
    private final Time time;
    /** The latest full value saved or replayed per share-partition, encoded: decoded only when a partition loads it. */
    private final Map<Id, byte[]> latest = new ConcurrentHashMap<>();
    /** The deltas saved or replayed after each share-partition's latest full value, by snapshot version. */
    private final Map<Id, java.util.NavigableMap<Long, byte[]>> deltas = new ConcurrentHashMap<>();
    private final Map<String, Map<String, String>> groupConfigs = new ConcurrentHashMap<>();
    private final Object[] partitionLocks;

    public LogShareStateStore(ShareTopics topics, int partitionCount, Time time) {
        this.topics = Objects.requireNonNull(topics, "topics");
        this.time = Objects.requireNonNull(time, "time");
        if (partitionCount < 1) {
            throw new IllegalArgumentException(TOPIC + " must have at least one partition, got " + partitionCount);
        }
        this.partitionCount = partitionCount;
        this.partitionLocks = new Object[partitionCount];
        for (int i = 0; i < partitionCount; i++) {
            partitionLocks[i] = new Object();
        }
    }

    /** Replays every partition of {@value #TOPIC}; call once before serving (a single node, tests). */
    public void load() {
        for (int p = 0; p < partitionCount; p++) {
            loadPartition(p);
        }
        log.info("Loaded the state of {} share-partitions from {}", latest.size(), TOPIC);
    }

    /**
     * Replays partition {@code p} of {@value #TOPIC} from its log start to its log end (records above the high
     * watermark included: on a new leader they are the ones the old leader may have answered already, and become
     * committed as the followers fetch them), replacing what was held of it. A malformed record stops the load here,
     * naming its offset, rather than when a share-partition loads it.
     *
     * @throws IllegalStateException if this broker has no log of the partition or a record cannot be read
     */
    public void loadPartition(int p) {
        checkPartition(p);
        TopicPartition tp = new TopicPartition(TOPIC, p);
        synchronized (partitionLocks[p]) {
            unloadPartition(p);
            ShareLog stateLog = topics.log(tp).orElseThrow(() -> new IllegalStateException(tp + " has no local log"));
            long offset = stateLog.logStartOffset();
            long end = stateLog.logEndOffset();
            while (offset < end) {
                Records records = stateLog.read(offset, READ_BYTES);
                long next = offset;
                for (RecordBatch batch : records.batches()) {
                    next = Math.max(next, batch.nextOffset());
                    if (batch.isControlBatch()) {
                        continue;
                    }
                    for (Record record : batch) {
                        if (record.offset() >= offset) {
                            try {
                                replay(tp, record);
                            } catch (IllegalArgumentException | java.nio.BufferUnderflowException e) {
                                throw new IllegalStateException("Unreadable share-state record at offset "
                                        + record.offset() + " of " + tp + ": " + e, e);
                            }
                        }
                    }
                }
                if (next == offset) {
                    break;
                }
                offset = next;
            }
            // deltas a later full value replaced (their tombstones are in its batch): none survive a clean append
            deltas.forEach((id, byVersion) -> {
                byte[] full = latest.get(id);
                if (full != null && partitionIndex(id.groupId()) == p) {
                    byVersion.headMap(ShareStateSerde.valueVersion(full), true).clear();
                }
            });
            deltas.values().removeIf(Map::isEmpty);
            latest.forEach((id, v) -> {
                if (partitionIndex(id.groupId()) == p) {
                    ShareStateSerde.decodeValue(ByteBuffer.wrap(v));
                }
            });
            deltas.forEach((id, d) -> {
                if (partitionIndex(id.groupId()) == p) {
                    d.values().forEach(v -> ShareStateSerde.decodeValue(ByteBuffer.wrap(v)));
                }
            });
        }
    }

    /** Forgets what is held of partition {@code p} of {@value #TOPIC} (its log stays as it is). */
    public void unloadPartition(int p) {
        checkPartition(p);
        synchronized (partitionLocks[p]) {
            latest.keySet().removeIf(id -> partitionIndex(id.groupId()) == p);
            deltas.keySet().removeIf(id -> partitionIndex(id.groupId()) == p);
            groupConfigs.keySet().removeIf(groupId -> partitionIndex(groupId) == p);
        }
    }

    /** The partition of {@value #TOPIC} holding the state of {@code groupId}'s share-partitions. */
    public int partitionIndex(String groupId) {
        return Utils.abs(groupId.hashCode()) % partitionCount;
    }

    public int partitionCount() {
        return partitionCount;
    }

    private void checkPartition(int p) {
        if (p < 0 || p >= partitionCount) {
            throw new IllegalArgumentException(TOPIC + " has partitions 0.." + (partitionCount - 1) + ", not " + p);
        }
    }

    private void replay(TopicPartition tp, Record record) {
        if (!record.hasKey()) {
            throw new IllegalStateException("Record at offset " + record.offset() + " of " + tp + " has no key");
        }
        if (ShareStateSerde.keyVersion(record.key()) == ShareStateSerde.GROUP_CONFIG_KEY_VERSION) {
            String groupId = ShareStateSerde.decodeGroupConfigKey(record.key());
            if (record.hasValue()) {
                groupConfigs.put(groupId, ShareStateSerde.decodeGroupConfigValue(record.value()));
            } else {
                groupConfigs.remove(groupId);
            }
            return;
        }
        if (ShareStateSerde.keyVersion(record.key()) == ShareStateSerde.DELTA_KEY_VERSION) {
            ShareStateSerde.DeltaKey delta = ShareStateSerde.decodeDeltaKey(record.key());
            Id id = new Id(delta.partition().groupId(), delta.partition().topicId(), delta.partition().partition());
            if (record.hasValue()) {
                byte[] value = Utils.toArray(record.value());
                ShareStateSerde.valueVersion(value);
                deltas.computeIfAbsent(id, i -> new java.util.TreeMap<>()).put(delta.version(), value);
            } else {
                java.util.NavigableMap<Long, byte[]> byVersion = deltas.get(id);
                if (byVersion != null) {
                    byVersion.remove(delta.version());
                }
            }
            return;
        }
        ShareStateSerde.StateKey key = ShareStateSerde.decodeKey(record.key());
        Id id = new Id(key.groupId(), key.topicId(), key.partition());
        if (!record.hasValue()) {
            latest.remove(id);
            return;
        }
        byte[] value = Utils.toArray(record.value());
        ShareStateSerde.valueVersion(value); // an unknown value version fails here, naming it
        latest.put(id, value);
    }

    /**
     * A share-partition's saved state as stored: its latest full value and the deltas after it in version order,
     * in the layouts of {@link ShareStateSerde}.
     */
    public record StoredState(byte[] full, List<byte[]> deltas) {

        public StoredState {
            Objects.requireNonNull(full, "full");
            deltas = List.copyOf(deltas);
        }

        /** The state: the full value with the deltas applied in order. */
        public SharePartitionSnapshot snapshot() {
            SharePartitionSnapshot snapshot = ShareStateSerde.decodeValue(ByteBuffer.wrap(full));
            if (deltas.isEmpty()) {
                return snapshot;
            }
            List<SharePartitionSnapshot> later = new java.util.ArrayList<>(deltas.size());
            for (byte[] delta : deltas) {
                later.add(ShareStateSerde.decodeValue(ByteBuffer.wrap(delta)));
            }
            return ShareStateSerde.applyDeltas(snapshot, later);
        }
    }

    @Override
    public Optional<SharePartitionSnapshot> load(SharePartitionKey key) {
        return stored(key.groupId(), key.topicId(), key.topicPartition().partition()).map(StoredState::snapshot);
    }

    /** The saved state of a share-partition, encoded, if there is one. */
    public Optional<StoredState> stored(String groupId, org.apache.kafka.common.Uuid topicId, int partition) {
        Id id = new Id(groupId, topicId, partition);
        synchronized (lockOf(groupId)) {
            byte[] value = latest.get(id);
            if (value == null) {
                return Optional.empty();
            }
            java.util.NavigableMap<Long, byte[]> byVersion = deltas.get(id);
            List<byte[]> later = byVersion == null ? List.of()
                    : List.copyOf(byVersion.tailMap(ShareStateSerde.valueVersion(value), false).values());
            return Optional.of(new StoredState(value, later));
        }
    }

    @Override
    public void save(SharePartition partition) {
        SharePartitionKey key = partition.key();
        synchronized (lockOf(key.groupId())) {
            // taken under the lock: a delta must be written after the save before it
            SharePartition.EncodedState state = partition.encodedState();
            try {
                write(key.groupId(), key.topicId(), key.topicPartition().partition(), state);
            } catch (RuntimeException e) {
                partition.saveFailed();
                throw e;
            }
        }
    }

    /**
     * Appends one state of a share-partition taken by {@link SharePartition#encodedState()} (a full value with
     * tombstones for the deltas it replaces, or a delta) and keeps it for {@link #stored}. A delta whose version is
     * not above the latest full value's is refused ({@link IllegalStateException}): it would be lost at the next load.
     *
     * @throws RuntimeException (a Kafka {@code ApiException}) when the append fails; nothing is kept then
     */
    public void write(String groupId, org.apache.kafka.common.Uuid topicId, int partitionIndex,
                      SharePartition.EncodedState state) {
        Id id = new Id(groupId, topicId, partitionIndex);
        synchronized (lockOf(groupId)) {
            byte[] v = state.value();
            byte[] current = latest.get(id);
            if (!state.full() && current != null && state.version() <= ShareStateSerde.valueVersion(current)) {
                throw new IllegalStateException("Delta " + state.version() + " of " + id + " is not above its full "
                        + "value's version " + ShareStateSerde.valueVersion(current));
            }
            java.util.NavigableMap<Long, byte[]> replaced = state.full() ? deltas.get(id) : null;
            byte[] k = state.full() ? ShareStateSerde.key(groupId, topicId, partitionIndex)
                    : ShareStateSerde.deltaKey(groupId, topicId, partitionIndex, state.version());
            int tombstones = replaced == null ? 0 : replaced.size();
            MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(k.length + v.length + 128
                    + tombstones * (k.length + 8 + 32)), Compression.NONE, TimestampType.CREATE_TIME, 0L);
            long now = time.milliseconds();
            builder.append(now, k, v);
            if (replaced != null) {
                for (long version : replaced.keySet()) {
                    builder.append(now, ShareStateSerde.deltaKey(groupId, topicId, partitionIndex, version), null);
                }
            }
            topics.append(partitionOf(groupId), builder.build());
            if (state.full()) {
                latest.put(id, v);
                deltas.remove(id);
            } else {
                deltas.computeIfAbsent(id, i -> new java.util.TreeMap<>()).put(state.version(), v);
            }
        }
    }

    @Override
    public Map<String, Map<String, String>> groupConfigs() {
        return Map.copyOf(groupConfigs);
    }

    /** Appends the group's settings (a tombstone when empty) to the group's partition of {@value #TOPIC}. */
    @Override
    public void saveGroupConfig(String groupId, Map<String, String> configs) {
        byte[] k = ShareStateSerde.groupConfigKey(groupId);
        byte[] v = configs.isEmpty() ? null : ShareStateSerde.groupConfigValue(configs);
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(k.length
                + (v == null ? 0 : v.length) + 128), Compression.NONE, TimestampType.CREATE_TIME, 0L);
        builder.append(time.milliseconds(), k, v);
        synchronized (lockOf(groupId)) {
            topics.append(partitionOf(groupId), builder.build());
            if (configs.isEmpty()) {
                groupConfigs.remove(groupId);
            } else {
                groupConfigs.put(groupId, Map.copyOf(configs));
            }
        }
    }

    @Override
    public List<Map.Entry<org.apache.kafka.common.Uuid, Integer>> partitionsOf(String groupId) {
        return latest.keySet().stream().filter(id -> id.groupId().equals(groupId))
                .map(id -> Map.entry(id.topicId(), id.partition())).toList();
    }

    @Override
    public void delete(String groupId, org.apache.kafka.common.Uuid topicId, int partition) {
        byte[] k = ShareStateSerde.key(groupId, topicId, partition);
        Id id = new Id(groupId, topicId, partition);
        synchronized (lockOf(groupId)) {
            java.util.NavigableMap<Long, byte[]> replaced = deltas.get(id);
            int tombstones = replaced == null ? 0 : replaced.size();
            MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(k.length + 128
                    + tombstones * (k.length + 8 + 32)), Compression.NONE, TimestampType.CREATE_TIME, 0L);
            long now = time.milliseconds();
            builder.append(now, k, null);
            if (replaced != null) {
                for (long version : replaced.keySet()) {
                    builder.append(now, ShareStateSerde.deltaKey(groupId, topicId, partition, version), null);
                }
            }
            topics.append(partitionOf(groupId), builder.build());
            latest.remove(id);
            deltas.remove(id);
        }
    }

    private Object lockOf(String groupId) {
        return partitionLocks[partitionIndex(groupId)];
    }

    private TopicPartition partitionOf(String groupId) {
        return new TopicPartition(TOPIC, partitionIndex(groupId));
    }

}
