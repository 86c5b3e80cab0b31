package dev.millrace.broker.network;

import io.netty.channel.DefaultMessageSizeEstimator;
import io.netty.channel.FileRegion;
import io.netty.channel.MessageSizeEstimator;

/**
 * Sizes outbound messages for the channel's write buffer accounting (writability): a {@link FileRegion} (a
 * response, {@link SendRegion}) by the bytes it will write, where Netty's default estimator says 0; anything else as
 * the default does. Without it a connection whose client never reads would stay writable however much waits.
 *
 * <p>Stateless; thread-safe.
 */
final class ResponseSizeEstimator implements MessageSizeEstimator {

    static final ResponseSizeEstimator INSTANCE = new ResponseSizeEstimator();

    private static final Handle HANDLE = new Handle() {
        private final Handle fallback = DefaultMessageSizeEstimator.DEFAULT.newHandle();

        @Override
        public int size(Object msg) {
            if (msg instanceof FileRegion region) {
                return (int) Math.min(Integer.MAX_VALUE, region.count() - region.transferred());
            }
            return fallback.size(msg);
        }
    };

    private ResponseSizeEstimator() {
    }

    @Override
    public Handle newHandle() {
        return HANDLE;
    }
}
