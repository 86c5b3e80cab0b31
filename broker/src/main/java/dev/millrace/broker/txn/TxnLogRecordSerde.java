package dev.millrace.broker.txn;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

import org.apache.kafka.common.TopicPartition;

import dev.millrace.protocol.ext.ExtensionFormatException;
import dev.millrace.protocol.ext.XaXid;

/**
 * The records of {@code __transaction_state} (compacted; the latest value per key is its state). Two kinds of
 * records, told apart by the key's version: a transactional id's state (key version 0, value version 0) and an XA
 * branch's state (key version 1, value version 1; XA, see {@link XaBranches}). Big-endian; strings are an int16
 * byte length followed by UTF-8 bytes.
 *
 * <pre>
 *  transactional id
 *  key:   version int16 (= 0) | transactionalId string
 *
 *  value: version int16 (= 0)
 *         producerId int64 | producerEpoch int16 | timeoutMs int32
 *         state int8 (TransactionState id: 0 Empty, 1 Ongoing, 2 PrepareCommit, 3 PrepareAbort,
 *                     4 CompleteCommit, 5 CompleteAbort, 6 PreparedXa)
 *         txnStartMs int64 (-1: no transaction) | lastUpdateMs int64
 *         partitionCount int32 | partitionCount times: topic string | partition int32
 *
 *  XA branch (in the partition of its transactional id)
 *  key:   version int16 (= 1) | formatId int32 | gtridLength int16 | gtrid bytes | bqualLength int16 | bqual bytes
 *
 *  value: version int16 (= 1)
 *         transactionalId string | producerId int64 | producerEpoch int16
 *         state int8 (XaBranchState id: 0 Prepared, 1 Committing, 2 RollingBack, 3 Committed, 4 RolledBack)
 *         heuristic int8 (1: an administrator decided the outcome; 0 otherwise)
 *         txnStartMs int64 | preparedMs int64 | lastUpdateMs int64
 *         partitionCount int32 | partitionCount times: topic string | partition int32
 * </pre>
 *
 * A null value (tombstone) removes the transactional id or the branch. State id 6 and the version-1 records came with
 * XA: a broker from before cannot read a log that holds them (no downgrade past XA). Stateless and thread-safe.
 */
public final class TxnLogRecordSerde {

    static final short KEY_VERSION = 0;
    static final short VALUE_VERSION = 0;
    static final short BRANCH_KEY_VERSION = 1;
    static final short BRANCH_VALUE_VERSION = 1;

    /** A key: a transactional id's (version 0, {@code xid} null) or an XA branch's (version 1, {@code xid} set). */
    record Key(String transactionalId, XaXid xid) {
    }

    private TxnLogRecordSerde() {
    }

    public static byte[] serializeKey(String transactionalId) {
        byte[] id = transactionalId.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(2 + 2 + id.length).putShort(KEY_VERSION).putShort((short) id.length).put(id)
                .array();
    }

    public static byte[] serializeValue(TransactionMetadata txn) {
        int size = 2 + 8 + 2 + 4 + 1 + 8 + 8 + 4;
        for (TopicPartition tp : txn.partitions()) {
            size += 2 + tp.topic().getBytes(StandardCharsets.UTF_8).length + 4;
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        buffer.putShort(VALUE_VERSION).putLong(txn.producerId()).putShort(txn.producerEpoch()).putInt(txn.timeoutMs())
                .put(txn.state().id()).putLong(txn.txnStartMs()).putLong(txn.lastUpdateMs())
                .putInt(txn.partitions().size());
        for (TopicPartition tp : txn.partitions()) {
            putString(buffer, tp.topic());
            buffer.putInt(tp.partition());
        }
        return buffer.array();
    }

    public static byte[] serializeBranchKey(XaXid xid) {
        ByteBuffer buffer = ByteBuffer.allocate(2 + xid.compactSize()).putShort(BRANCH_KEY_VERSION);
        xid.writeTo(buffer);
        return buffer.array();
    }

    public static byte[] serializeBranchValue(XaBranch branch) {
        byte[] id = branch.transactionalId().getBytes(StandardCharsets.UTF_8);
        int size = 2 + 2 + id.length + 8 + 2 + 1 + 1 + 8 + 8 + 8 + 4;
        for (TopicPartition tp : branch.partitions()) {
            size += 2 + tp.topic().getBytes(StandardCharsets.UTF_8).length + 4;
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        buffer.putShort(BRANCH_VALUE_VERSION);
        putString(buffer, branch.transactionalId());
        buffer.putLong(branch.producerId()).putShort(branch.producerEpoch()).put(branch.state().id())
                .put((byte) (branch.heuristic() ? 1 : 0)).putLong(branch.txnStartMs()).putLong(branch.preparedMs())
                .putLong(branch.lastUpdateMs()).putInt(branch.partitions().size());
        for (TopicPartition tp : branch.partitions()) {
            putString(buffer, tp.topic());
            buffer.putInt(tp.partition());
        }
        return buffer.array();
    }

    /**
     * Reads a key of either kind.
     *
     * @throws IllegalArgumentException naming the field and byte offset if the key is malformed
     */
    static Key deserializeAnyKey(ByteBuffer key) {
        ByteBuffer buffer = key.duplicate();
        try {
            short version = buffer.getShort();
            if (version == KEY_VERSION) {
                return new Key(getString(buffer, "transactionalId"), null);
            }
            if (version == BRANCH_KEY_VERSION) {
                return new Key(null, XaXid.readFrom(buffer));
            }
            throw new IllegalArgumentException("key version " + version + " at byte 0 is not " + KEY_VERSION
                    + " or " + BRANCH_KEY_VERSION);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("key is truncated at byte " + (buffer.position() - key.position()));
        } catch (ExtensionFormatException e) {
            throw new IllegalArgumentException("XA branch key: " + e.getMessage(), e);
        }
    }

    /**
     * Reads an XA branch's value.
     *
     * @throws IllegalArgumentException naming the field and byte offset if the value is malformed
     */
    static XaBranch deserializeBranchValue(XaXid xid, ByteBuffer value) {
        ByteBuffer buffer = value.duplicate();
        int start = buffer.position();
        try {
            short version = buffer.getShort();
            if (version != BRANCH_VALUE_VERSION) {
                throw new IllegalArgumentException("XA branch value version " + version + " at byte 0 is not "
                        + BRANCH_VALUE_VERSION);
            }
            String transactionalId = getString(buffer, "transactionalId");
            long producerId = buffer.getLong();
            short epoch = buffer.getShort();
            int stateAt = buffer.position() - start;
            XaBranchState state;
            try {
                state = XaBranchState.forId(buffer.get());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(e.getMessage() + " at byte " + stateAt);
            }
            int heuristicAt = buffer.position() - start;
            byte heuristic = buffer.get();
            if (heuristic != 0 && heuristic != 1) {
                throw new IllegalArgumentException("heuristic " + heuristic + " at byte " + heuristicAt
                        + " is not 0 or 1");
            }
            long txnStartMs = buffer.getLong();
            long preparedMs = buffer.getLong();
            long lastUpdateMs = buffer.getLong();
            Set<TopicPartition> partitions = getPartitions(buffer, start);
            return new XaBranch(xid, transactionalId, producerId, epoch, state, heuristic == 1, partitions,
                    txnStartMs, preparedMs, lastUpdateMs);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("XA branch value is truncated at byte " + (buffer.position() - start));
        }
    }

    private static Set<TopicPartition> getPartitions(ByteBuffer buffer, int start) {
        int countAt = buffer.position() - start;
        int count = buffer.getInt();
        if (count < 0 || count > buffer.remaining() / 6) {
            throw new IllegalArgumentException("partition count " + count + " at byte " + countAt
                    + " does not fit the " + buffer.remaining() + " bytes left");
        }
        Set<TopicPartition> partitions = new HashSet<>();
        for (int i = 0; i < count; i++) {
            String topic = getString(buffer, "topic");
            partitions.add(new TopicPartition(topic, buffer.getInt()));
        }
        return partitions;
    }

    /**
     * Reads a key.
     *
     * @throws IllegalArgumentException naming the field and byte offset if the key is malformed
     */
    public static String deserializeKey(ByteBuffer key) {
        ByteBuffer buffer = key.duplicate();
        try {
            short version = buffer.getShort();
            if (version != KEY_VERSION) {
                throw new IllegalArgumentException("key version " + version + " at byte 0 is not " + KEY_VERSION);
            }
            return getString(buffer, "transactionalId");
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("key is truncated at byte " + (buffer.position() - key.position()));
        }
    }

    /**
     * Reads a value.
     *
     * @throws IllegalArgumentException naming the field and byte offset if the value is malformed
     */
    public static TransactionMetadata deserializeValue(String transactionalId, ByteBuffer value) {
        ByteBuffer buffer = value.duplicate();
        int start = buffer.position();
        try {
            short version = buffer.getShort();
            if (version != VALUE_VERSION) {
                throw new IllegalArgumentException("value version " + version + " at byte 0 is not "
                        + VALUE_VERSION);
            }
            long producerId = buffer.getLong();
            short epoch = buffer.getShort();
            int timeoutMs = buffer.getInt();
            int stateAt = buffer.position() - start;
            TransactionState state;
            try {
                state = TransactionState.forId(buffer.get());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(e.getMessage() + " at byte " + stateAt);
            }
            long txnStartMs = buffer.getLong();
            long lastUpdateMs = buffer.getLong();
            Set<TopicPartition> partitions = getPartitions(buffer, start);
            return new TransactionMetadata(transactionalId, producerId, epoch, timeoutMs, state, partitions,
                    txnStartMs, lastUpdateMs);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("value is truncated at byte " + (buffer.position() - start));
        }
    }

    private static void putString(ByteBuffer buffer, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        buffer.putShort((short) bytes.length).put(bytes);
    }

    private static String getString(ByteBuffer buffer, String field) {
        int at = buffer.position();
        short length = buffer.getShort();
        if (length < 0 || length > buffer.remaining()) {
            throw new IllegalArgumentException(field + " length " + length + " at byte " + at + " does not fit the "
                    + buffer.remaining() + " bytes left");
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
