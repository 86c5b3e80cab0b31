package dev.millrace.broker.log;

import java.util.function.Supplier;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;

/**
 * Lets the lock-free reads of a {@link PartitionLog} notice a truncation that ran under them, in the
 * manner of a sequence lock. The log bumps a counter when a truncation starts cutting files (odd) and
 * when the files, the segment map and the published log end agree again (even).
 *
 * <pre>
 *   reader:  c = count  ->  read  ->  count == c and c even ?  yes: answer   no: read again
 *   log:     begin (odd)  ->  cut segments, files, log end  ->  end (even)
 * </pre>
 *
 * A read that started while a truncation was cutting waits for the log's lock (held by the truncation)
 * and runs again. A read that failed because a file was cut under it (an EOF, a slice past the end) is
 * run again; storage and out-of-range errors are answers, not races, and pass through.
 *
 * <p>Thread-safety: {@link #begin} and {@link #end} are called under the log's lock; {@link #read} from
 * any thread.
 */
final class TruncationGuard {

    private final Object logLock;
    private volatile long count;

    TruncationGuard(Object logLock) {
        this.logLock = logLock;
    }

    /** A truncation starts cutting; the caller holds the log's lock. */
    void begin() {
        count++;
    }

    /** The cut files and the published log end agree again; the caller holds the log's lock. */
    void end() {
        count++;
    }

    /** Twice the number of truncations so far (odd while one is cutting). */
    long count() {
        return count;
    }

    /** Runs {@code read}, again as long as a truncation overlapped it. */
    <T> T read(Supplier<T> read) {
        while (true) {
            long before = count;
            if ((before & 1) == 1 && !Thread.holdsLock(logLock)) {
                synchronized (logLock) {
                    // held by the truncation: once we have it, the cut is done
                }
                continue;
            }
            T result;
            try {
                result = read.get();
            } catch (OffsetOutOfRangeException | KafkaStorageException e) {
                throw e;
            } catch (KafkaException | IllegalArgumentException | IllegalStateException e) {
                if (count == before) {
                    throw e;
                }
                continue;
            }
            if (count == before) {
                return result;
            }
        }
    }
}
