package dev.millrace.broker.share;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.kafka.common.Uuid;

/**
 * The records of the share-state topic: one per share-partition, the latest wins (the topic is
 * compacted). Big-endian, version-prefixed:
 *
 * <pre>
 *   key:   version:int16(0) | groupLength:int16 | group:utf8 | topicId:uuid(2 x int64) | partition:int32
 *   value: version:int16(2) | snapshotVersion:int64 | startOffset:int64 | endOffset:int64 | runCount:int32
 *          | runCount x ( firstOffset:int64 | length:int32 | state:int8 | deliveryCount:int16 )
 *          | deadLetterProducerEpoch:int16 | deadLetterNextSequence:int32 | pendingCount:int32
 *          | pendingCount x ( offset:int64 | deliveryCount:int16 | reason:int8 )
 *          | holdRunCount:int32
 *          | holdRunCount x ( producerId:int64 | scanFrom:int64 | firstOffset:int64 | length:int32 )
 * </pre>
 *
 * After the runs come the dead-letter copies the share-partition still owes, in archive order ({@link
 * DeadLetterCopies}), then its records held for producer transactions ({@link TransactionHolds}; their entries are
 * ACQUIRED). Older values end earlier: version 0 after the runs (read as owing no copy), version 1 after the
 * dead-letter part (read as holding nothing for a transaction); this broker writes version 2.
 *
 * Group settings ({@link ShareGroupConfigs}) live in the same topic under a key of version 1:
 *
 * <pre>
 *   key:   version:int16(1) | groupLength:int16 | group:utf8
 *   value: version:int16(0) | count:int32 | count x ( nameLength:int16 | name:utf8 | valueLength:int16 | value:utf8 )
 * </pre>
 *
 * A run is consecutive in-flight offsets with one state and delivery count; state is the ordinal
 * of {@link RecordState}. Decoding a key or value with an unknown version throws
 * {@link IllegalArgumentException} naming it.
 *
 * <p>A share-partition with a large in-flight state (a selective queue holds every record nobody matched back, and
 * an entry for every record delivered past them) saves deltas between full values, so that a save costs what
 * changed rather than the whole state ({@link SharePartition#encodedState()} decides which). A delta has a key of
 * its own per snapshot version, so compaction keeps every delta, and a value in the full value's layout holding only
 * the entries changed since the save before it (their state as it is now; offsets below its start offset are gone)
 * and the whole dead-letter and transaction-hold parts as they stand:
 *
 * <pre>
 *   key:   version:int16(2) | groupLength:int16 | group:utf8 | topicId:uuid(2 x int64) | partition:int32
 *          | snapshotVersion:int64
 *   value: as the full value above (version 2), runs of the changed entries only
 * </pre>
 *
 * The state is the latest full value with every later delta applied in version order ({@link #applyDeltas}). The
 * full value that replaces a partition's deltas is appended in one batch with a tombstone for each of them.
 *
 * <p>Stateless and thread-safe.
 */
public final class ShareStateSerde {

    /** A decoded key: which share-partition. */
    public record StateKey(String groupId, Uuid topicId, int partition) {
    }

    private static final short VERSION = 0;
    /** The version of a share-partition state value this broker writes; it reads 0 and 1 too. */
    static final short VALUE_VERSION = 2;

    /** The key version of a group-settings record. */
    public static final short GROUP_CONFIG_KEY_VERSION = 1;

    /** The key version of a share-partition state delta. */
    public static final short DELTA_KEY_VERSION = 2;

    /** A decoded delta key: which share-partition, and the snapshot version of the delta. */
    public record DeltaKey(StateKey partition, long version) {
    }

    private ShareStateSerde() {
    }

    public static byte[] key(String groupId, Uuid topicId, int partition) {
        byte[] group = groupId.getBytes(StandardCharsets.UTF_8);
        ByteBuffer buffer = ByteBuffer.allocate(2 + 2 + group.length + 16 + 4);
        buffer.putShort(VERSION).putShort((short) group.length).put(group)
                .putLong(topicId.getMostSignificantBits()).putLong(topicId.getLeastSignificantBits()).putInt(partition);
        return buffer.array();
    }

    public static byte[] deltaKey(String groupId, Uuid topicId, int partition, long version) {
        byte[] group = groupId.getBytes(StandardCharsets.UTF_8);
        ByteBuffer buffer = ByteBuffer.allocate(2 + 2 + group.length + 16 + 4 + 8);
        buffer.putShort(DELTA_KEY_VERSION).putShort((short) group.length).put(group)
                .putLong(topicId.getMostSignificantBits()).putLong(topicId.getLeastSignificantBits()).putInt(partition)
                .putLong(version);
        return buffer.array();
    }

    public static DeltaKey decodeDeltaKey(ByteBuffer buffer) {
        short version = buffer.getShort();
        if (version != DELTA_KEY_VERSION) {
            throw new IllegalArgumentException("Not a share-state delta key: version " + version);
        }
        byte[] group = new byte[buffer.getShort()];
        buffer.get(group);
        Uuid topicId = new Uuid(buffer.getLong(), buffer.getLong());
        int partition = buffer.getInt();
        return new DeltaKey(new StateKey(new String(group, StandardCharsets.UTF_8), topicId, partition),
                buffer.getLong());
    }

    /** The version of the key in {@code buffer}, without consuming it. */
    public static short keyVersion(ByteBuffer buffer) {
        return buffer.getShort(buffer.position());
    }

    public static byte[] groupConfigKey(String groupId) {
        byte[] group = groupId.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(2 + 2 + group.length).putShort(GROUP_CONFIG_KEY_VERSION)
                .putShort((short) group.length).put(group).array();
    }

    public static String decodeGroupConfigKey(ByteBuffer buffer) {
        short version = buffer.getShort();
        if (version != GROUP_CONFIG_KEY_VERSION) {
            throw new IllegalArgumentException("Not a group-config key: version " + version);
        }
        byte[] group = new byte[buffer.getShort()];
        buffer.get(group);
        return new String(group, StandardCharsets.UTF_8);
    }

    public static byte[] groupConfigValue(java.util.Map<String, String> configs) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        ByteBuffer head = ByteBuffer.allocate(6).putShort(VERSION).putInt(configs.size());
        bytes.writeBytes(head.array());
        configs.forEach((name, value) -> {
            bytes.writeBytes(shortString(name));
            bytes.writeBytes(shortString(value));
        });
        return bytes.toByteArray();
    }

    public static java.util.Map<String, String> decodeGroupConfigValue(ByteBuffer buffer) {
        checkVersion(buffer.getShort(), "group-config value");
        int count = buffer.getInt();
        java.util.Map<String, String> configs = new java.util.LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            configs.put(readShortString(buffer), readShortString(buffer));
        }
        return configs;
    }

    private static byte[] shortString(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(2 + utf8.length).putShort((short) utf8.length).put(utf8).array();
    }

    private static String readShortString(ByteBuffer buffer) {
        byte[] utf8 = new byte[buffer.getShort()];
        buffer.get(utf8);
        return new String(utf8, StandardCharsets.UTF_8);
    }

    public static StateKey decodeKey(ByteBuffer buffer) {
        checkVersion(buffer.getShort(), "key");
        byte[] group = new byte[buffer.getShort()];
        buffer.get(group);
        Uuid topicId = new Uuid(buffer.getLong(), buffer.getLong());
        return new StateKey(new String(group, StandardCharsets.UTF_8), topicId, buffer.getInt());
    }

    public static byte[] value(SharePartitionSnapshot snapshot) {
        RunWriter runs = new RunWriter(snapshot.version(), snapshot.startOffset(), snapshot.endOffset(),
                snapshot.entries().size(), snapshot.deadLetters(), snapshot.holds());
        for (SharePartitionSnapshot.Entry e : snapshot.entries()) {
            runs.add(e.offset(), e.state(), e.deliveryCount());
        }
        return runs.toBytes();
    }

    /**
     * The value for a share-partition's in-flight map as it stands, written straight from the map (the partition's
     * save path: no intermediate entries), with the dead-letter copies it owes and its transaction holds. The caller
     * holds whatever keeps {@code inFlight} still.
     */
    static byte[] value(long version, long startOffset, long endOffset, InFlightWindow inFlight,
                        DeadLetterCopies.State copies, TransactionHolds.State holds) {
        RunWriter runs = new RunWriter(version, startOffset, endOffset, inFlight.size(), copies, holds);
        inFlight.forEach((offset, r) -> runs.add(offset, r.state, r.deliveryCount));
        return runs.toBytes();
    }

    /**
     * A delta value: the entries of {@code inFlight} at {@code changed} (ascending, distinct; offsets without an entry
     * or below {@code startOffset} are left out), with the start and end offsets and the dead-letter copies as they
     * stand.
     */
    static byte[] deltaValue(long version, long startOffset, long endOffset, InFlightWindow inFlight, long[] changed,
                             DeadLetterCopies.State copies, TransactionHolds.State holds) {
        RunWriter runs = new RunWriter(version, startOffset, endOffset, changed.length, copies, holds);
        for (long offset : changed) {
            InFlightRecord r = offset < startOffset ? null : inFlight.get(offset);
            if (r != null) {
                runs.add(offset, r.state, r.deliveryCount);
            }
        }
        return runs.toBytes();
    }

    /**
     * {@code base} with {@code deltas} applied in their order: each delta's entries replace those at their offsets,
     * entries below its start offset are dropped, and the last delta's offsets and version are taken. All go into one
     * map, so that loading a state with thousands of small deltas costs their entries, not thousands of copies of it.
     */
    public static SharePartitionSnapshot applyDeltas(SharePartitionSnapshot base, List<SharePartitionSnapshot> deltas) {
        if (deltas.isEmpty()) {
            return base;
        }
        java.util.TreeMap<Long, SharePartitionSnapshot.Entry> entries = new java.util.TreeMap<>();
        for (SharePartitionSnapshot.Entry e : base.entries()) {
            entries.put(e.offset(), e);
        }
        SharePartitionSnapshot last = base;
        for (SharePartitionSnapshot delta : deltas) {
            for (SharePartitionSnapshot.Entry e : delta.entries()) {
                entries.put(e.offset(), e);
            }
            if (!entries.isEmpty() && entries.firstKey() < delta.startOffset()) {
                entries.headMap(delta.startOffset()).clear();
            }
            last = delta;
        }
        return new SharePartitionSnapshot(last.startOffset(), last.endOffset(), new ArrayList<>(entries.values()),
                last.version(), last.deadLetters(), last.holds());
    }

    /** The snapshot version a value carries, without decoding the rest. */
    public static long valueVersion(byte[] value) {
        ByteBuffer buffer = ByteBuffer.wrap(value);
        checkValueVersion(buffer.getShort());
        return buffer.getLong();
    }

    public static SharePartitionSnapshot decodeValue(ByteBuffer buffer) {
        short valueVersion = buffer.getShort();
        checkValueVersion(valueVersion);
        long version = buffer.getLong();
        long start = buffer.getLong();
        long end = buffer.getLong();
        int runCount = buffer.getInt();
        RecordState[] states = RecordState.values();
        List<SharePartitionSnapshot.Entry> entries = new ArrayList<>();
        for (int r = 0; r < runCount; r++) {
            long first = buffer.getLong();
            int length = buffer.getInt();
            byte state = buffer.get();
            short deliveryCount = buffer.getShort();
            if (state < 0 || state >= states.length) {
                throw new IllegalArgumentException("Unknown record state " + state + " in a share-state record");
            }
            for (long offset = first; offset < first + length; offset++) {
                entries.add(new SharePartitionSnapshot.Entry(offset, states[state], deliveryCount));
            }
        }
        DeadLetterCopies.State deadLetters = valueVersion == 0 ? DeadLetterCopies.State.EMPTY
                : DeadLetterCopies.read(buffer);
        TransactionHolds.State holds = valueVersion < 2 ? TransactionHolds.State.EMPTY : TransactionHolds.read(buffer);
        return new SharePartitionSnapshot(start, end, entries, version, deadLetters, holds);
    }

    private static void checkValueVersion(short version) {
        if (version < 0 || version > VALUE_VERSION) {
            throw new IllegalArgumentException("Unknown share-state value version " + version + ", expected 0 to "
                    + VALUE_VERSION);
        }
    }

    /**
     * Writes a value, merging consecutive offsets of one state and delivery count into runs as they come (offsets in
     * ascending order), into a buffer sized for the worst case of one run per offset.
     */
    private static final class RunWriter {
        private static final int HEADER = 2 + 8 * 3 + 4;
        private static final int RUN = 8 + 4 + 1 + 2;
        private final ByteBuffer buffer;
        private final DeadLetterCopies.State copies;
        private final TransactionHolds.State holds;
        private int runCount;
        private long first = -1;
        private int length;
        private byte state;
        private int deliveryCount;

        RunWriter(long version, long startOffset, long endOffset, int maxRuns, DeadLetterCopies.State copies,
                  TransactionHolds.State holds) {
            this.copies = copies;
            this.holds = holds;
            buffer = ByteBuffer.allocate(HEADER + maxRuns * RUN + DeadLetterCopies.encodedSize(copies)
                    + TransactionHolds.encodedSize(holds));
            buffer.putShort(VALUE_VERSION).putLong(version).putLong(startOffset).putLong(endOffset).putInt(0);
        }

        void add(long offset, RecordState recordState, int count) {
            byte ordinal = (byte) recordState.ordinal();
            if (length > 0 && first + length == offset && state == ordinal && deliveryCount == count) {
                length++;
                return;
            }
            flush();
            first = offset;
            length = 1;
            state = ordinal;
            deliveryCount = count;
        }

        private void flush() {
            if (length > 0) {
                buffer.putLong(first).putInt(length).put(state).putShort((short) deliveryCount);
                runCount++;
            }
        }

        byte[] toBytes() {
            flush();
            length = 0;
            buffer.putInt(HEADER - 4, runCount);
            DeadLetterCopies.write(copies, buffer);
            TransactionHolds.write(holds, buffer);
            return Arrays.copyOf(buffer.array(), buffer.position());
        }
    }

    private static void checkVersion(short version, String what) {
        if (version != VERSION) {
            throw new IllegalArgumentException("Unknown share-state " + what + " version " + version + ", expected "
                    + VERSION);
        }
    }
}
