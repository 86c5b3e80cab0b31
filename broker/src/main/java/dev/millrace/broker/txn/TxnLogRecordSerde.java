package dev.millrace.broker.txn;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

import org.apache.kafka.common.TopicPartition;

/**
 * The records of {@code __transaction_state} (compacted; the latest value per transactional id is
 * its state). Big-endian; strings are an int16 byte length followed by UTF-8 bytes.
 *
 * <pre>
 *  key:   version int16 (= 0) | transactionalId string
 *
 *  value: version int16 (= 0)
 *         producerId int64 | producerEpoch int16 | timeoutMs int32
 *         state int8 (TransactionState id: 0 Empty, 1 Ongoing, 2 PrepareCommit, 3 PrepareAbort,
 *                     4 CompleteCommit, 5 CompleteAbort)
 *         txnStartMs int64 (-1: no transaction) | lastUpdateMs int64
 *         partitionCount int32 | partitionCount times: topic string | partition int32
 * </pre>
 *
 * A null value (tombstone) removes the transactional id. Stateless and thread-safe.
 */
public final class TxnLogRecordSerde {

    static final short KEY_VERSION = 0;
    static final short VALUE_VERSION = 0;

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
