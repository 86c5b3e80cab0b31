package dev.millrace.protocol.ext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;

import org.apache.kafka.common.protocol.types.Struct;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** ShareMember (key 30006) through its documented layout: round trips, the bytes, and bodies it must refuse. */
@Timeout(10)
class ShareMemberCodecTest {

    private static ByteBuffer bytes(Struct struct) {
        ByteBuffer body = ByteBuffer.allocate(struct.sizeOf());
        struct.writeTo(body);
        return body.flip();
    }

    @Test
    void shouldRoundTripARequestInAFrame() {
        assertThat(ExtensionApi.forKey((short) 30006)).contains(ExtensionApi.SHARE_MEMBER);
        assertThat(ExtensionApi.SHARE_MEMBER.maxVersion()).isEqualTo(ShareMember.VERSION);
        ShareMember.Request request = new ShareMember.Request("millrace.queue.q", "member-1");
        ByteBuffer frame = new ExtensionHeader(ExtensionApi.SHARE_MEMBER.key(), ShareMember.VERSION, 7, "b1")
                .frame(request.toStruct());
        assertThat(frame.getInt()).isEqualTo(frame.remaining());
        assertThat(ExtensionHeader.read(frame).apiKey()).isEqualTo((short) 30006);

        assertThat(ShareMember.Request.read(frame)).isEqualTo(request);
        assertThat(frame.hasRemaining()).isFalse();
    }

    @Test
    void shouldKeepTheLayoutOfRequestAndResponse() {
        // string group_id, string member_id
        ByteBuffer request = bytes(new ShareMember.Request("g", "m").toStruct());
        assertThat(request).isEqualTo(ByteBuffer.allocate(6).putShort((short) 1).put((byte) 'g')
                .putShort((short) 1).put((byte) 'm').flip());

        // int16 error_code, string error_message (nullable), int32 member_epoch, string rack_id (nullable)
        ByteBuffer response = bytes(ShareMember.Response.member(9, "r").toStruct());
        assertThat(response).isEqualTo(ByteBuffer.allocate(13).putShort((short) 0).putShort((short) -1).putInt(9)
                .putShort((short) 1).put((byte) 'r').flip());
        assertThat(ShareMember.Response.read(response)).isEqualTo(ShareMember.Response.member(9, "r"));
        ShareMember.Response error = ShareMember.Response.error((short) 25, "unknown member m");
        assertThat(ShareMember.Response.read(bytes(error.toStruct()))).isEqualTo(error);
    }

    @Test
    void shouldRefuseTruncatedBodies() {
        assertThatThrownBy(() -> ShareMember.Request.read(ByteBuffer.wrap(new byte[] {0, 3, 'g'})))
                .isInstanceOf(ExtensionFormatException.class).hasMessageStartingWith("malformed ShareMember request");
        assertThatThrownBy(() -> ShareMember.Response.read(ByteBuffer.wrap(new byte[] {0, 0, -1})))
                .isInstanceOf(ExtensionFormatException.class).hasMessageStartingWith("malformed ShareMember response");
    }
}
