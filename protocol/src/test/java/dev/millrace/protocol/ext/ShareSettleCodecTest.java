package dev.millrace.protocol.ext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.List;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.types.Struct;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** ShareSettle (key 30002) through its documented layout: round trips, and bodies it must refuse. */
@Timeout(10)
class ShareSettleCodecTest {

    private static final ShareSettle.Request REQUEST = new ShareSettle.Request("millrace.queue.q", "member-1", List.of(
            new ShareSettle.PartitionBatches("q", 0, List.of(
                    new ShareSettle.Batch(0, 9, ShareSettle.ACCEPT),
                    new ShareSettle.Batch(10, 10, ShareSettle.GAP),
                    new ShareSettle.Batch(11, 12, ShareSettle.RELEASE),
                    new ShareSettle.Batch(13, 13, ShareSettle.REJECT),
                    new ShareSettle.Batch(14, 20, ShareSettle.RENEW),
                    new ShareSettle.Batch(Long.MAX_VALUE - 1, Long.MAX_VALUE, ShareSettle.RETURN))),
            new ShareSettle.PartitionBatches("other", 7, List.of())));

    private static ByteBuffer bytes(Struct struct) {
        ByteBuffer body = ByteBuffer.allocate(struct.sizeOf());
        struct.writeTo(body);
        return body.flip();
    }

    @Test
    void shouldRoundTripEveryTypeWhenARequestIsFramedAndRead() {
        assertThat(ExtensionApi.forKey((short) 30002)).contains(ExtensionApi.SHARE_SETTLE);
        assertThat(ExtensionApi.SHARE_SETTLE.maxVersion()).isEqualTo(ShareSettle.VERSION);
        ByteBuffer frame = new ExtensionHeader(ExtensionApi.SHARE_SETTLE.key(), ShareSettle.VERSION, 11, "me")
                .frame(REQUEST.toStruct());
        assertThat(frame.getInt()).isEqualTo(frame.remaining());

        assertThat(ExtensionHeader.read(frame)).isEqualTo(new ExtensionHeader((short) 30002, (short) 0, 11, "me"));
        ShareSettle.Request read = ShareSettle.Request.read(frame);

        assertThat(read).isEqualTo(REQUEST);
        assertThat(read.partitions().get(0).batches()).extracting(ShareSettle.Batch::type)
                .containsExactly((byte) 1, (byte) 0, (byte) 2, (byte) 3, (byte) 4, (byte) 5);
        assertThat(frame.hasRemaining()).isFalse();
    }

    @Test
    void shouldKeepTheLayoutWhenARequestIsWritten() {
        ShareSettle.Request one = new ShareSettle.Request("g", "m", List.of(new ShareSettle.PartitionBatches("t", 3,
                List.of(new ShareSettle.Batch(5, 6, ShareSettle.RETURN)))));
        ByteBuffer body = bytes(one.toStruct());

        // string group_id, string member_id, array partitions [string topic, int32 partition, array batches
        // [int64 first_offset, int64 last_offset, int8 type]]
        ByteBuffer expected = ByteBuffer.allocate(body.remaining());
        expected.putShort((short) 1).put((byte) 'g').putShort((short) 1).put((byte) 'm')
                .putInt(1).putShort((short) 1).put((byte) 't').putInt(3)
                .putInt(1).putLong(5).putLong(6).put((byte) 5);
        assertThat(expected.hasRemaining()).isFalse();
        assertThat(body).isEqualTo(expected.flip());
    }

    @Test
    void shouldRoundTripPartitionErrorsWhenAResponseIsFramedAndRead() {
        ShareSettle.Response response = new ShareSettle.Response(Errors.NONE.code(), null, List.of(
                new ShareSettle.PartitionResult("q", 0, Errors.NONE.code()),
                new ShareSettle.PartitionResult("q", 1, Errors.INVALID_RECORD_STATE.code()),
                new ShareSettle.PartitionResult("gone", 0, Errors.UNKNOWN_TOPIC_OR_PARTITION.code())));
        ByteBuffer frame = new ExtensionHeader((short) 30002, (short) 0, 13, null).responseFrame(response.toStruct());
        assertThat(frame.getInt()).isEqualTo(frame.remaining());
        assertThat(frame.getInt()).isEqualTo(13);

        assertThat(ShareSettle.Response.read(frame)).isEqualTo(response);
        assertThat(frame.hasRemaining()).isFalse();

        ShareSettle.Response refused = new ShareSettle.Response(Errors.INVALID_REQUEST.code(), "unknown settle type 9",
                List.of());
        assertThat(ShareSettle.Response.read(bytes(refused.toStruct()))).isEqualTo(refused);
    }

    @Test
    void shouldThrowNamingShareSettleWhenARequestBodyIsTruncated() {
        ByteBuffer body = bytes(REQUEST.toStruct());
        body.limit(body.limit() - 1); // the last batch's type is missing

        assertThatThrownBy(() -> ShareSettle.Request.read(body)).isInstanceOf(ExtensionFormatException.class)
                .hasMessageContaining("malformed ShareSettle request");
    }

    @Test
    void shouldThrowNamingShareSettleWhenARequestBodyIsGarbage() {
        // group_id claims 32767 bytes, and only 2 follow
        ByteBuffer body = ByteBuffer.wrap(new byte[] {0x7f, (byte) 0xff, 'g', 'h'});

        assertThatThrownBy(() -> ShareSettle.Request.read(body)).isInstanceOf(ExtensionFormatException.class)
                .hasMessageContaining("malformed ShareSettle request");
        // a negative array length of partitions
        ByteBuffer negative = ByteBuffer.allocate(2 + 1 + 2 + 1 + 4);
        negative.putShort((short) 1).put((byte) 'g').putShort((short) 1).put((byte) 'm').putInt(-5).flip();
        assertThatThrownBy(() -> ShareSettle.Request.read(negative)).isInstanceOf(ExtensionFormatException.class)
                .hasMessageContaining("ShareSettle");
    }

    @Test
    void shouldThrowNamingShareSettleWhenAResponseBodyIsTruncated() {
        ShareSettle.Response response = new ShareSettle.Response(Errors.NONE.code(), null, List.of(
                new ShareSettle.PartitionResult("q", 0, Errors.NONE.code())));
        ByteBuffer body = bytes(response.toStruct());
        body.limit(body.limit() - 2); // the partition's error code is missing

        assertThatThrownBy(() -> ShareSettle.Response.read(body)).isInstanceOf(ExtensionFormatException.class)
                .hasMessageContaining("malformed ShareSettle response");
    }
}
