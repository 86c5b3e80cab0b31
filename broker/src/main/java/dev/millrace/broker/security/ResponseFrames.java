package dev.millrace.broker.security;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.network.TransferableChannel;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;

/** A response as one size-prefixed frame in a buffer (for the few responses the security handlers answer). */
final class ResponseFrames {

    private ResponseFrames() {
    }

    static ByteBuf frame(ByteBufAllocator alloc, RequestHeader header, AbstractResponse response) {
        Send send = response.toSend(header.toResponseHeader(), header.apiVersion());
        ByteBuf out = alloc.heapBuffer((int) send.size());
        BufferChannel channel = new BufferChannel(out);
        try {
            while (!send.completed()) {
                send.writeTo(channel);
            }
        } catch (IOException e) {
            out.release();
            throw new UncheckedIOException("Cannot happen: writing to memory", e);
        }
        return out;
    }

    /** Appends what is written to a buffer (also {@link FileRegionEncoder}'s target). */
    static final class BufferChannel implements TransferableChannel {
        private final ByteBuf out;

        BufferChannel(ByteBuf out) {
            this.out = out;
        }

        @Override
        public boolean hasPendingWrites() {
            return false;
        }

        @Override
        public long transferFrom(FileChannel fileChannel, long position, long count) throws IOException {
            throw new IOException("no file content in security responses");
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) {
            long total = 0;
            for (int i = offset; i < offset + length; i++) {
                total += write(srcs[i]);
            }
            return total;
        }

        @Override
        public long write(ByteBuffer[] srcs) {
            return write(srcs, 0, srcs.length);
        }

        @Override
        public int write(ByteBuffer src) {
            int n = src.remaining();
            out.writeBytes(src);
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }
}
