package dev.millrace.broker.share;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The dead-letter copies one share-partition still owes, saved with its state, so that a record archived for the
 * dead-letter topic reaches it exactly once even when the broker dies between the archive and the copy, or between
 * the copy and the save that records it.
 *
 * <p><b>How.</b> An archive that must be copied ({@link DeadLetter}, the topic has {@code millrace.share.dlq.topic})
 * joins the pending list in the same state change, so the save that makes the archive durable makes the debt durable
 * too. {@link DeadLetterPublisher} copies the list's head, one copy at a time per share-partition, in archive order,
 * as an idempotent batch: producer id {@link #producerId} (fixed per share-partition, in a range the broker never
 * allocates), the saved producer epoch, and the saved next sequence. Once the copy is on the dead-letter partition's
 * in-sync replicas, the head leaves the list and the sequence moves on, in one saved change. A broker that dies after
 * the copy but before that save leaves the head pending with the same sequence; the next leader of the
 * share-partition sends the same batch again and the dead-letter partition's producer state answers it as a
 * duplicate (it keeps its last five batches per producer), so the copy is not written twice. A copy that could not be
 * written for good (the record left the log, the batch was refused) leaves the list without using its sequence.
 *
 * <p>A dead-letter partition that refuses the sequence (it lost the producer's state, or saw a later one from a
 * share-partition state that went back) is answered with the next producer epoch, from sequence 0 ({@link
 * #fenced()}): that one copy is then not protected against a duplicate.
 *
 * <p>Saved after the in-flight runs of a share-state value of version 1 ({@link ShareStateSerde}):
 *
 * <pre>
 *   producerEpoch:int16 | nextSequence:int32 | count:int32
 *   | count x ( offset:int64 | deliveryCount:int16 | reason:int8 )       reason: 0 rejected, 1 delivery-count-limit
 * </pre>
 *
 * <p>Not thread-safe: the owning {@link SharePartition}'s monitor guards it.
 */
public final class DeadLetterCopies {

    /** Producer ids from here up are the copies' own: far above any the broker allocates (from 0, in blocks). */
    static final long PRODUCER_ID_BASE = 1L << 62;

    /** The saved part: immutable, for snapshots. */
    public record State(short producerEpoch, int nextSequence, List<Pending> pending) {

        public static final State EMPTY = new State((short) 0, 0, List.of());

        public State {
            pending = List.copyOf(pending);
        }
    }

    /** One copy owed: which offset, after how many deliveries, and why. */
    public record Pending(long offset, int deliveryCount, String reason) {
    }

    /** The head copy to make now: what to copy and the idempotent producer fields to send it with. */
    record Copy(DeadLetter deadLetter, long producerId, short producerEpoch, int sequence) {
    }

    private final SharePartitionKey key;
    private final long producerId;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private short producerEpoch;
    private int nextSequence;

    DeadLetterCopies(SharePartitionKey key) {
        this.key = key;
        this.producerId = producerId(key);
    }

    /** The producer id of {@code key}'s copies: {@link #PRODUCER_ID_BASE} plus 62 bits of a hash of the key. */
    static long producerId(SharePartitionKey key) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(key.groupId().getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            sha.update(String.valueOf(key.topicId()).getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            sha.update(key.topicPartition().topic().getBytes(StandardCharsets.UTF_8));
            sha.update(ByteBuffer.allocate(4).putInt(key.topicPartition().partition()).array());
            long hash = ByteBuffer.wrap(sha.digest()).getLong();
            return PRODUCER_ID_BASE | (hash & (PRODUCER_ID_BASE - 1));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    void add(DeadLetter deadLetter) {
        pending.addLast(new Pending(deadLetter.offset(), deadLetter.deliveryCount(), deadLetter.reason()));
    }

    boolean isEmpty() {
        return pending.isEmpty();
    }

    int size() {
        return pending.size();
    }

    /** The copy to make next, if any. */
    Optional<Copy> head() {
        Pending head = pending.peekFirst();
        return head == null ? Optional.empty() : Optional.of(new Copy(new DeadLetter(key, head.offset(),
                head.deliveryCount(), head.reason()), producerId, producerEpoch, nextSequence));
    }

    /**
     * The head at {@code offset} was copied ({@code written}: the batch is on the dead-letter partition, its sequence
     * used) or given up without a write; false if the head is another offset (nothing changes then).
     */
    boolean done(long offset, boolean written) {
        Pending head = pending.peekFirst();
        if (head == null || head.offset() != offset) {
            return false;
        }
        pending.pollFirst();
        if (written) {
            nextSequence = nextSequence == Integer.MAX_VALUE ? 0 : nextSequence + 1;
        }
        return true;
    }

    /** The dead-letter partition refused the sequence or epoch: the next epoch, from sequence 0. */
    void fenced() {
        producerEpoch = (short) (producerEpoch == Short.MAX_VALUE ? 0 : producerEpoch + 1);
        nextSequence = 0;
    }

    State state() {
        return new State(producerEpoch, nextSequence, pending.isEmpty() ? List.of() : new ArrayList<>(pending));
    }

    void restore(State state) {
        pending.clear();
        pending.addAll(state.pending());
        producerEpoch = state.producerEpoch();
        nextSequence = state.nextSequence();
    }

    /** Size of {@link #write}'s output. */
    static int encodedSize(State state) {
        return 2 + 4 + 4 + state.pending().size() * (8 + 2 + 1);
    }

    static void write(State state, ByteBuffer buffer) {
        buffer.putShort(state.producerEpoch()).putInt(state.nextSequence()).putInt(state.pending().size());
        for (Pending p : state.pending()) {
            buffer.putLong(p.offset()).putShort((short) p.deliveryCount()).put(reasonCode(p.reason()));
        }
    }

    static State read(ByteBuffer buffer) {
        short epoch = buffer.getShort();
        int sequence = buffer.getInt();
        int count = buffer.getInt();
        if (count < 0 || count > buffer.remaining() / (8 + 2 + 1)) {
            throw new IllegalArgumentException("A share-state value claims " + count
                    + " pending dead-letter copies in " + buffer.remaining() + " bytes");
        }
        List<Pending> pending = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long offset = buffer.getLong();
            int deliveryCount = buffer.getShort();
            pending.add(new Pending(offset, deliveryCount, reason(buffer.get())));
        }
        return new State(epoch, sequence, pending);
    }

    private static byte reasonCode(String reason) {
        return DeadLetter.REASON_REJECTED.equals(reason) ? (byte) 0 : (byte) 1;
    }

    private static String reason(byte code) {
        return switch (code) {
            case 0 -> DeadLetter.REASON_REJECTED;
            case 1 -> DeadLetter.REASON_DELIVERY_LIMIT;
            default -> throw new IllegalArgumentException("Unknown dead-letter reason " + code
                    + " in a share-state value");
        };
    }
}
