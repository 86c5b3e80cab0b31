package dev.millrace.broker.network;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;

import io.netty.channel.FileRegion;
import io.netty.util.AbstractReferenceCounted;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.network.TransferableChannel;

/**
 * A kafka-clients {@link Send} (a serialized response, whose record sections may be
 * {@code FileRecords} slices) as a Netty {@link FileRegion}, so that the NIO transport writes the
 * header and fields from memory and the records straight from the segment file with
 * {@code FileChannel.transferTo}: zero-copy fetch responses.
 *
 * <p>Not thread-safe: written by the channel's event loop only.
 */
final class SendRegion extends AbstractReferenceCounted implements FileRegion {

    private final Send send;
    private long transferred;

    SendRegion(Send send) {
        this.send = send;
    }

    @Override
    public long position() {
        return 0;
    }

    @Override
    @Deprecated
    public long transfered() {
        return transferred;
    }

    @Override
    public long transferred() {
        return transferred;
    }

    @Override
    public long count() {
        return send.size();
    }

    @Override
    public long transferTo(WritableByteChannel target, long position) throws IOException {
        long written = send.writeTo(new Channel(target));
        transferred += written;
        return written;
    }

    @Override
    public FileRegion retain() {
        super.retain();
        return this;
    }

    @Override
    public FileRegion retain(int increment) {
        super.retain(increment);
        return this;
    }

    @Override
    public FileRegion touch() {
        return this;
    }

    @Override
    public FileRegion touch(Object hint) {
        return this;
    }

    @Override
    protected void deallocate() {
        // the Send holds heap buffers and file slices owned by the log; nothing to free
    }

    /** The socket channel as kafka-clients' TransferableChannel. */
    private static final class Channel implements TransferableChannel {
        private final WritableByteChannel target;

        Channel(WritableByteChannel target) {
            this.target = target;
        }

        @Override
        public boolean hasPendingWrites() {
            return false;
        }

        @Override
        public long transferFrom(FileChannel fileChannel, long position, long count) throws IOException {
            return fileChannel.transferTo(position, count, target);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            long total = 0;
            for (int i = offset; i < offset + length; i++) {
                int n = target.write(srcs[i]);
                total += n;
                if (srcs[i].hasRemaining()) {
                    break;
                }
            }
            return total;
        }

        @Override
        public long write(ByteBuffer[] srcs) throws IOException {
            return write(srcs, 0, srcs.length);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            return target.write(src);
        }

        @Override
        public boolean isOpen() {
            return target.isOpen();
        }

        @Override
        public void close() throws IOException {
            target.close();
        }
    }
}
