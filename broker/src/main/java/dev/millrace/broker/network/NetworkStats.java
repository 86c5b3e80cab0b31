package dev.millrace.broker.network;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * Counters of one listener's connections: closes by {@link CloseReason}, exceptions that reached a connection's
 * handler ({@link #unexpectedErrors()}: zero unless the broker has a bug), handler failures answered with
 * UNKNOWN_SERVER_ERROR, requests handled, and gauges of open connections and of the bytes held for them (queued
 * requests plus responses not yet written to the socket).
 *
 * <p>Thread-safe: counters are atomics, gauges are read from the live connections when asked.
 */
public final class NetworkStats {

    private final AtomicLongArray closes = new AtomicLongArray(CloseReason.values().length);
    private final AtomicLong unexpectedErrors = new AtomicLong();
    private final AtomicLong handlerFailures = new AtomicLong();
    private final AtomicLong requests = new AtomicLong();
    private volatile LongSupplier openConnections = () -> 0;
    private volatile LongSupplier bufferedBytes = () -> 0;

    void onClosed(CloseReason reason) {
        closes.incrementAndGet(reason.ordinal());
    }

    void onUnexpectedError() {
        unexpectedErrors.incrementAndGet();
    }

    void onHandlerFailure() {
        handlerFailures.incrementAndGet();
    }

    void onRequest() {
        requests.incrementAndGet();
    }

    void gauges(LongSupplier openConnections, LongSupplier bufferedBytes) {
        this.openConnections = openConnections;
        this.bufferedBytes = bufferedBytes;
    }

    /** Connections closed (or refused) by the broker for {@code reason}. */
    public long closed(CloseReason reason) {
        return closes.get(reason.ordinal());
    }

    /** Every close count by reason, zeros left out. */
    public Map<CloseReason, Long> closes() {
        Map<CloseReason, Long> out = new EnumMap<>(CloseReason.class);
        for (CloseReason reason : CloseReason.values()) {
            long count = closed(reason);
            if (count > 0) {
                out.put(reason, count);
            }
        }
        return out;
    }

    /** Exceptions that reached a connection handler or escaped one of its tasks: a broker bug each. */
    public long unexpectedErrors() {
        return unexpectedErrors.get();
    }

    /** Requests whose handler failed with something other than a Kafka API error (answered UNKNOWN_SERVER_ERROR). */
    public long handlerFailures() {
        return handlerFailures.get();
    }

    /** Requests parsed and handed to the request handler. */
    public long requests() {
        return requests.get();
    }

    /** Connections open now (refused ones never count). */
    public long openConnections() {
        return openConnections.getAsLong();
    }

    /** Bytes held for open connections now: requests queued behind the one in flight, responses not yet written. */
    public long bufferedBytes() {
        return bufferedBytes.getAsLong();
    }

    @Override
    public String toString() {
        return "NetworkStats{open=" + openConnections() + ", buffered=" + bufferedBytes() + ", requests=" + requests()
                + ", closes=" + closes() + ", unexpectedErrors=" + unexpectedErrors() + ", handlerFailures="
                + handlerFailures() + "}";
    }
}
