package dev.millrace.broker.security;

import java.io.IOException;
import java.nio.channels.WritableByteChannel;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.FileRegion;
import io.netty.handler.codec.MessageToByteEncoder;

/**
 * Copies the responses the connection handler writes as {@link FileRegion}s (zero-copy fetch responses) into
 * buffers, for a TLS connection: {@code SslHandler} encrypts bytes in memory only, so on TLS listeners the
 * records are read from the segment files into the buffer first. Sits between the {@code SslHandler} and the
 * connection handler.
 *
 * <p>Not sharable: one per connection, used on its event loop.
 */
final class FileRegionEncoder extends MessageToByteEncoder<FileRegion> {

    FileRegionEncoder() {
        super(FileRegion.class, false);
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, FileRegion region, ByteBuf out) throws IOException {
        long count = region.count();
        if (count > Integer.MAX_VALUE) {
            throw new IOException("A response of " + count + " bytes is too large for a TLS connection");
        }
        out.ensureWritable((int) count);
        WritableByteChannel target = new ResponseFrames.BufferChannel(out);
        while (region.transferred() < count) {
            long written = region.transferTo(target, region.transferred());
            if (written <= 0) {
                throw new IOException("A response stopped after " + region.transferred() + " of " + count + " bytes");
            }
        }
    }
}
