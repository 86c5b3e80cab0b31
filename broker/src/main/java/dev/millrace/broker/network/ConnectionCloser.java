package dev.millrace.broker.network;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one way the broker closes a client connection on its own initiative: one log line naming the client's
 * address and the reason, one count in {@link NetworkStats}, then the close. Only the first reason given for a
 * connection is logged and counted, so that a close never produces a second line (a truncated frame is not reported
 * for a connection the broker itself closed part-way through a frame).
 *
 * <pre>
 *  WARN  Closing connection from /127.0.0.1:51234 (MALFORMED_REQUEST): Error reading byte array of 536870911 byte(s)
 *  INFO  Closing connection from /127.0.0.1:51240 (IDLE): no bytes in or out for 600000 ms
 * </pre>
 *
 * <p>Thread-safe; called on the channel's event loop.
 */
final class ConnectionCloser {

    private static final Logger log = LoggerFactory.getLogger(ConnectionCloser.class);
    private static final AttributeKey<CloseReason> REASON = AttributeKey.valueOf("millrace.closeReason");

    private final NetworkStats stats;

    ConnectionCloser(NetworkStats stats) {
        this.stats = stats;
    }

    NetworkStats stats() {
        return stats;
    }

    /** Closes {@code channel} for {@code reason}, logging {@code detail}; nothing when it was already closed so. */
    void close(Channel channel, CloseReason reason, String detail) {
        if (!channel.attr(REASON).compareAndSet(null, reason)) {
            return;
        }
        stats.onClosed(reason);
        if (reason == CloseReason.NOT_SERVING) {
            log.debug("Closing connection from {} ({}): {}", channel.remoteAddress(), reason, detail);
        } else if (reason == CloseReason.IDLE) {
            log.info("Closing connection from {} ({}): {}", channel.remoteAddress(), reason, detail);
        } else {
            log.warn("Closing connection from {} ({}): {}", channel.remoteAddress(), reason, detail);
        }
        channel.close();
    }

    /** A bug: an exception reached a handler or escaped a task. Counted, logged with its stack, connection closed. */
    void closeUnexpected(Channel channel, Throwable error) {
        stats.onUnexpectedError();
        if (!channel.attr(REASON).compareAndSet(null, CloseReason.UNEXPECTED_ERROR)) {
            log.warn("Unexpected error on connection from {}, already closing", channel.remoteAddress(), error);
            return;
        }
        stats.onClosed(CloseReason.UNEXPECTED_ERROR);
        log.warn("Closing connection from {} ({})", channel.remoteAddress(), CloseReason.UNEXPECTED_ERROR, error);
        channel.close();
    }

    /** Whether the broker closed (or is closing) {@code channel} for a reason of its own. */
    static boolean closedByBroker(Channel channel) {
        return channel.attr(REASON).get() != null;
    }
}
