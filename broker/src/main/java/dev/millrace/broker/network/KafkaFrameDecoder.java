package dev.millrace.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;

/**
 * Splits a connection's bytes into Kafka request frames and rejects bad size prefixes before buffering a byte of
 * the frame.
 *
 * <pre>
 *  +-----------------+--------------------------------------+
 *  | size (int32 BE) | size bytes: request header + body    |   0 &lt;= size &lt;= socket.request.max.bytes
 *  +-----------------+--------------------------------------+
 * </pre>
 *
 * <ul>
 *   <li>a negative size, or one above {@code socket.request.max.bytes}: the connection is closed
 *       ({@link CloseReason#NEGATIVE_SIZE}, {@link CloseReason#OVERSIZED_FRAME}, as Kafka's
 *       {@code InvalidReceiveException}), and every byte after it is dropped unread;
 *   <li>the client closes the connection part-way through a frame: logged once as
 *       {@link CloseReason#TRUNCATED_FRAME} with how much of it arrived, unless the broker closed the connection
 *       itself.
 * </ul>
 * Emits each frame without its size prefix.
 *
 * <p>Not thread-safe: one instance per connection, used on its event loop.
 */
final class KafkaFrameDecoder extends LengthFieldBasedFrameDecoder {

    private static final int SIZE_BYTES = 4;

    private final int maxRequestBytes;
    private final ConnectionCloser closer;
    private boolean rejected;

    KafkaFrameDecoder(int maxRequestBytes, ConnectionCloser closer) {
        super(maxRequestBytes > Integer.MAX_VALUE - SIZE_BYTES ? Integer.MAX_VALUE : maxRequestBytes + SIZE_BYTES,
                0, SIZE_BYTES, 0, SIZE_BYTES, true);
        this.maxRequestBytes = maxRequestBytes;
        this.closer = closer;
    }

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        if (rejected) {
            in.skipBytes(in.readableBytes());
            return null;
        }
        if (in.readableBytes() >= SIZE_BYTES) {
            int size = in.getInt(in.readerIndex());
            if (size < 0 || size > maxRequestBytes) {
                rejected = true;
                in.skipBytes(in.readableBytes());
                if (size < 0) {
                    closer.close(ctx.channel(), CloseReason.NEGATIVE_SIZE, "negative size prefix " + size);
                } else {
                    closer.close(ctx.channel(), CloseReason.OVERSIZED_FRAME, "size prefix " + size
                            + " is above socket.request.max.bytes (" + maxRequestBytes + ")");
                }
                return null;
            }
        }
        return super.decode(ctx, in);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        ByteBuf pending = internalBuffer();
        if (!rejected && pending.isReadable() && !ConnectionCloser.closedByBroker(ctx.channel())) {
            int have = pending.readableBytes();
            String detail = have < SIZE_BYTES ? "the client closed after " + have + " of a frame's 4 size bytes"
                    : "the client closed after " + (have - SIZE_BYTES) + " of a frame's "
                    + pending.getInt(pending.readerIndex()) + " bytes";
            closer.close(ctx.channel(), CloseReason.TRUNCATED_FRAME, detail);
        }
        super.channelInactive(ctx);
    }
}
