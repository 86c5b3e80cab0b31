package dev.millrace.broker.share;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;

/**
 * The records of one share-partition held for producer transactions (TxnShareAcknowledge, {@link
 * ShareTransactions}), saved with its state, so that a hold survives the loss of the share-partition's leader: the
 * next leader keeps the records held and settles them by the transaction's marker, accepting on commit and releasing
 * on abort, instead of delivering again records whose consumption a committed transaction already included (the
 * failover chaos suite's consume-transform-produce flow saw such inputs transformed twice).
 *
 * <p>Each hold keeps the log end offset of the share-partition's topic-partition when it was made: the transaction's
 * marker can only come after it. A leader that restores holds looks for their markers in the log from there ({@link
 * #endedIn}): a marker written while the state moved (the old leader appended it and died before saving the
 * settlement) is found there; one written later reaches the partition through the marker path as usual.
 *
 * <p>Saved after the dead-letter part of a share-state value of version 2 ({@link ShareStateSerde}), as runs of
 * consecutive offsets held for one producer:
 *
 * <pre>
 *   runCount:int32 | runCount x ( producerId:int64 | scanFrom:int64 | firstOffset:int64 | length:int32 )
 * </pre>
 *
 * <p>Not thread-safe: the owning {@link SharePartition}'s monitor guards it.
 */
public final class TransactionHolds {

    private static final int RUN_BYTES = 8 + 8 + 8 + 4;

    /** Consecutive offsets held for one producer's transaction; {@code scanFrom}: where its marker may be. */
    public record Run(long producerId, long scanFrom, long firstOffset, int length) {
    }

    /** The saved part: immutable, for snapshots. */
    public record State(List<Run> runs) {

        public static final State EMPTY = new State(List.of());

        public State {
            runs = List.copyOf(runs);
        }
    }

    /** A hold: for which producer, and from where its marker is looked for. */
    private record Hold(long producerId, long scanFrom) {
    }

    private final TreeMap<Long, Hold> byOffset = new TreeMap<>();

    void hold(long offset, long producerId, long scanFrom) {
        byOffset.put(offset, new Hold(producerId, scanFrom));
    }

    /** The hold of {@code offset} ended (settled, or the record left the window). */
    void release(long offset) {
        byOffset.remove(offset);
    }

    void removeBelow(long offset) {
        byOffset.headMap(offset).clear();
    }

    void clear() {
        byOffset.clear();
    }

    boolean isEmpty() {
        return byOffset.isEmpty();
    }

    /** The producer each held offset is held for. */
    Map<Long, Long> producerByOffset() {
        Map<Long, Long> out = new HashMap<>();
        byOffset.forEach((offset, hold) -> out.put(offset, hold.producerId()));
        return out;
    }

    /** Whether records are held for {@code producerId}'s transaction. */
    boolean holdsFor(long producerId) {
        for (Hold hold : byOffset.values()) {
            if (hold.producerId() == producerId) {
                return true;
            }
        }
        return false;
    }

    /** Per producer with holds: the lowest offset its marker may be at. */
    Map<Long, Long> scanFromByProducer() {
        Map<Long, Long> out = new HashMap<>();
        byOffset.values().forEach(h -> out.merge(h.producerId(), h.scanFrom(), Math::min));
        return out;
    }

    State state() {
        return byOffset.isEmpty() ? State.EMPTY : new State(runs());
    }

    void restore(State state) {
        byOffset.clear();
        for (Run run : state.runs()) {
            for (long offset = run.firstOffset(); offset < run.firstOffset() + run.length(); offset++) {
                byOffset.put(offset, new Hold(run.producerId(), run.scanFrom()));
            }
        }
    }

    private List<Run> runs() {
        List<Run> runs = new ArrayList<>();
        long first = -1;
        int length = 0;
        Hold current = null;
        for (Map.Entry<Long, Hold> e : byOffset.entrySet()) {
            if (current != null && e.getValue().equals(current) && e.getKey() == first + length) {
                length++;
                continue;
            }
            if (current != null) {
                runs.add(new Run(current.producerId(), current.scanFrom(), first, length));
            }
            current = e.getValue();
            first = e.getKey();
            length = 1;
        }
        if (current != null) {
            runs.add(new Run(current.producerId(), current.scanFrom(), first, length));
        }
        return runs;
    }

    /** Size of {@link #write}'s output. */
    static int encodedSize(State state) {
        return 4 + state.runs().size() * RUN_BYTES;
    }

    static void write(State state, ByteBuffer buffer) {
        buffer.putInt(state.runs().size());
        for (Run run : state.runs()) {
            buffer.putLong(run.producerId()).putLong(run.scanFrom()).putLong(run.firstOffset()).putInt(run.length());
        }
    }

    static State read(ByteBuffer buffer) {
        int count = buffer.getInt();
        if (count < 0 || count > buffer.remaining() / RUN_BYTES) {
            throw new IllegalArgumentException("A share-state value claims " + count + " runs of transaction holds in "
                    + buffer.remaining() + " bytes");
        }
        List<Run> runs = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long producerId = buffer.getLong();
            long scanFrom = buffer.getLong();
            long first = buffer.getLong();
            int length = buffer.getInt();
            if (length <= 0) {
                throw new IllegalArgumentException("A share-state value holds a run of " + length
                        + " offsets for producer " + producerId);
            }
            runs.add(new Run(producerId, scanFrom, first, length));
        }
        return new State(runs);
    }

    /**
     * The transactions among {@code scanFrom}'s producers whose marker is in {@code log} at or after their offset,
     * with their outcome (true: commit). Reads batch headers up to the log end, a read of {@code readBytes} at a time.
     */
    static Map<Long, Boolean> endedIn(ShareLog log, Map<Long, Long> scanFrom, int readBytes) {
        Map<Long, Boolean> ended = new HashMap<>();
        if (scanFrom.isEmpty()) {
            return ended;
        }
        long offset = Math.max(log.logStartOffset(), scanFrom.values().stream().min(Long::compare).orElseThrow());
        long end = log.logEndOffset();
        while (offset < end && ended.size() < scanFrom.size()) {
            Records records = log.read(offset, readBytes);
            long next = offset;
            for (RecordBatch batch : records.batches()) {
                next = batch.nextOffset();
                Long from = scanFrom.get(batch.producerId());
                if (!batch.isControlBatch() || from == null || batch.lastOffset() < from) {
                    continue;
                }
                for (Record record : batch) {
                    ControlRecordType type = ControlRecordType.parse(record.key());
                    if (type == ControlRecordType.COMMIT || type == ControlRecordType.ABORT) {
                        ended.putIfAbsent(batch.producerId(), type == ControlRecordType.COMMIT);
                    }
                }
            }
            if (next <= offset) {
                break; // nothing more to read
            }
            offset = next;
        }
        return ended;
    }
}
