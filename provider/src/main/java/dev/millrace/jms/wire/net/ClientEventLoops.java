package dev.millrace.jms.wire.net;

import java.util.concurrent.TimeUnit;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The event loops that every Millrace client channel of this JVM runs on: a shared pool, like the Artemis client's
 * global worker pool, so that connections, sessions and consumers cost sockets, not threads. The pool has
 * {@code min(2, available processors)} daemon threads ({@code millrace-client-io-N}), created on first use; set
 * system property {@code millrace.client.ioThreads} to change it. The threads never block: network I/O, request
 * completions and the share consumers' timers run there, never application code.
 *
 * <p>Thread-safe.
 */
public final class ClientEventLoops {

    private static final class Holder {
        static final EventLoopGroup GROUP = new NioEventLoopGroup(threads(),
                new DefaultThreadFactory("millrace-client-io", true));
    }

    private ClientEventLoops() {
    }

    private static int threads() {
        String configured = System.getProperty("millrace.client.ioThreads");
        if (configured != null) {
            try {
                int n = Integer.parseInt(configured.trim());
                if (n >= 1) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // fall through to the error
            }
            throw new IllegalArgumentException("system property millrace.client.ioThreads must be a positive "
                    + "integer, got '" + configured + "'");
        }
        return Math.min(2, Runtime.getRuntime().availableProcessors());
    }

    /** The next event loop of the shared pool (round-robin); a share consumer keeps all its channels on one. */
    public static EventLoop next() {
        return Holder.GROUP.next();
    }

    /** Schedules {@code task} on one of the shared event loops. */
    public static void schedule(Runnable task, long delayMs) {
        Holder.GROUP.schedule(task, delayMs, TimeUnit.MILLISECONDS);
    }
}
