package dev.millrace.broker.share;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;

import dev.millrace.broker.log.BatchCursor;
import dev.millrace.broker.log.BatchCut;
import dev.millrace.broker.log.BatchSubset;
import dev.millrace.protocol.selector.Selector;

/**
 * A selective member's next scan, run ahead of its next fetch on a thread of its own, off the share-partition's
 * monitor, so that the broker looks for a consumer's next matches while the consumer processes its last ones.
 * (A selective fetch otherwise scans ten records per match at one in ten while the consumer waits.)
 *
 * <p>It reads the log from {@link #from()} (the selector's scan cursor when it was scheduled) and evaluates the
 * selector on every record as a first delivery, looking at no share state: it only reads the log. What it finds, in
 * offset order:
 * <pre>
 *   match(offset, cut)  a record the selector matches; cut = its batch cut down to the matches (BatchCut)
 *   skip(offset)        an offset of a control batch or of an aborted transaction's batch, or an offset with no
 *                       record (compaction): never deliverable, archived when taken
 *   (nothing)           a record the selector does not match: stays available without an entry
 * </pre>
 * up to {@link #scannedTo()}: every offset in [from, scannedTo) is one of the three. It stops after {@code maxRecords}
 * matches or {@code maxBytes} of cut batches, at {@code limit} (the high watermark, or last stable offset, and the
 * selective window when it was scheduled: records below both do not change) or after
 * {@link SharePartition#SELECTIVE_READS_PER_FETCH} reads. The share-partition takes the result under its monitor at
 * the member's next acquisition, checking each match's state then, when the selector's cursor is still at
 * {@code from} (a record that became available again below it moves the cursor and voids the lookahead). Selectors
 * that read JMSXDeliveryCount are not scanned ahead (a first delivery's count would be assumed).
 *
 * <p>Thread-safe by hand-off: {@link #run} fills the result on the scanning thread and publishes it with the volatile
 * {@link #done()}; readers look only after it.
 */
final class SelectiveLookahead implements Runnable {

    /** A match or a skipped offset, in offset order; {@code cut} is null for a skip. */
    record Found(long offset, Cut cut) {
    }

    /** The batch of a match, cut down to the batch's matches; set once the batch is read. */
    static final class Cut {
        private ByteBuffer bytes;

        /** The cut batch's bytes (a fresh view each time). */
        ByteBuffer bytes() {
            return bytes.duplicate();
        }
    }

    private final ShareLog log;
    private final Selector selector;
    private final long from;
    private final long limit;
    private final int maxRecords;
    private final int maxBytes;
    private final List<Found> found = new ArrayList<>();
    private long scannedTo;
    private boolean full;
    private volatile boolean started;
    private volatile boolean done;
    private volatile boolean cancelled;
    private final java.util.concurrent.CountDownLatch finished = new java.util.concurrent.CountDownLatch(1);

    SelectiveLookahead(ShareLog log, Selector selector, long from, long limit, int maxRecords, int maxBytes) {
        this.log = log;
        this.selector = selector;
        this.from = from;
        this.limit = limit;
        this.maxRecords = maxRecords;
        this.maxBytes = maxBytes;
        this.scannedTo = from;
    }

    Selector selector() {
        return selector;
    }

    long from() {
        return from;
    }

    boolean done() {
        return done;
    }

    /** The scan's results; only once {@link #done()}. */
    List<Found> found() {
        return found;
    }

    /** Every offset below this (from {@link #from()}) was scanned; only once {@link #done()}. */
    long scannedTo() {
        return scannedTo;
    }

    /** Whether the scan stopped because it had its records or bytes; only once {@link #done()}. */
    boolean full() {
        return full;
    }

    /**
     * Waits up to {@code timeoutMs} for the scan to finish (a fetch that would otherwise scan the same records itself
     * waits for them instead).
     */
    void awaitDone(long timeoutMs) {
        try {
            finished.await(timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Makes a scan not yet run or still running stop early; its result is not used. */
    void cancel() {
        cancelled = true;
    }

    /** Whether the scan has begun (it may wait behind other partitions' lookaheads on the shared thread). */
    boolean started() {
        return started;
    }

    @Override
    public void run() {
        started = true;
        try {
            if (!cancelled) {
                scan();
            }
        } catch (RuntimeException e) {
            found.clear(); // an unreadable log: the fetch scans for itself and reports what it finds
            scannedTo = from;
        } finally {
            done = true;
            finished.countDown();
        }
    }

    private void scan() {
        SelectorMatcher matcher = new SelectorMatcher();
        BatchCursor cursor = new BatchCursor();
        BatchCut picked = new BatchCut(cursor);
        ScanReader reader = new ScanReader();
        List<Record> kept = new ArrayList<>();
        int matches = 0;
        int bytes = 0;
        long next = from;
        for (int reads = 0; reads < SharePartition.SELECTIVE_READS_PER_FETCH && next < limit; reads++) {
            Records records = reader.read(log, next, SharePartition.SELECTIVE_READ_BYTES);
            ByteBuffer holder = reader.holder();
            int position = 0;
            boolean any = false;
            for (RecordBatch batch : records.batches()) {
                int batchStart = position;
                position += batch.sizeInBytes();
                if (cancelled) {
                    return;
                }
                if (batch.lastOffset() < next) {
                    continue;
                }
                if (batch.baseOffset() >= limit) {
                    next = limit;
                    break;
                }
                any = true;
                long batchEnd = Math.min(batch.lastOffset() + 1, limit);
                if (log.skip(batch)) {
                    for (long o = Math.max(next, batch.baseOffset()); o < batchEnd; o++) {
                        found.add(new Found(o, null));
                    }
                    next = batchEnd;
                    scannedTo = next;
                    continue;
                }
                long expected = Math.max(next, batch.baseOffset());
                Cut cut = new Cut();
                if (BatchCursor.canWalk(batch)) {
                    cursor.load(batch, holder, batchStart);
                    while (cursor.next() && cursor.offset() < batchEnd) {
                        long o = cursor.offset();
                        if (o < expected) {
                            continue;
                        }
                        skipGaps(expected, o);
                        expected = o + 1;
                        if (matcher.matches(selector, cursor, 1)) {
                            picked.pick();
                            found.add(new Found(o, cut));
                        }
                    }
                    if (picked.picked() > 0) {
                        matches += picked.picked();
                        cut.bytes = picked.take(false);
                        bytes += cut.bytes.remaining();
                    }
                } else {
                    for (Record r : batch) {
                        if (r.offset() < expected || r.offset() >= batchEnd) {
                            continue;
                        }
                        skipGaps(expected, r.offset());
                        expected = r.offset() + 1;
                        if (matcher.matches(selector, r, 1)) {
                            kept.add(r);
                            found.add(new Found(r.offset(), cut));
                        }
                    }
                }
                skipGaps(expected, batchEnd);
                if (!kept.isEmpty()) {
                    cut.bytes = BatchSubset.of(batch, kept, false);
                    matches += kept.size();
                    bytes += cut.bytes.remaining();
                    kept.clear();
                }
                next = batchEnd;
                scannedTo = next;
                if (matches >= maxRecords || bytes >= maxBytes) {
                    full = true;
                    return;
                }
            }
            if (!any) {
                return;
            }
        }
    }

    private void skipGaps(long fromInclusive, long toExclusive) {
        for (long o = fromInclusive; o < toExclusive; o++) {
            found.add(new Found(o, null));
        }
    }
}
