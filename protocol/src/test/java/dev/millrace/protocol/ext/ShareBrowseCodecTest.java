package dev.millrace.protocol.ext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class ShareBrowseCodecTest {

    @Test
    void requestFrameRoundTripsThroughTheDocumentedLayout() {
        ShareBrowse.Request request = new ShareBrowse.Request("millrace.queue.q", "q", 3, 42L, 4096);
        ByteBuffer frame = new ExtensionHeader(ExtensionApi.SHARE_BROWSE.key(), (short) 0, 7, "me")
                .frame(request.toStruct());
        assertThat(frame.getInt()).isEqualTo(frame.remaining());
        // Kafka request header v1: key, version, correlation id, client id
        assertThat(frame.getShort(frame.position())).isEqualTo((short) 30000);
        ExtensionHeader header = ExtensionHeader.read(frame);
        assertThat(header).isEqualTo(new ExtensionHeader((short) 30000, (short) 0, 7, "me"));
        assertThat(ShareBrowse.Request.read(frame)).isEqualTo(request);
        assertThat(frame.hasRemaining()).isFalse();
    }

    @Test
    void responseRoundTripsAndHiddenRangesAnswerMembership() {
        ShareBrowse.Response response = new ShareBrowse.Response((short) 0, null, 5, 20, 12,
                List.of(new ShareBrowse.OffsetRange(6, 7), new ShareBrowse.OffsetRange(10, 10)),
                ByteBuffer.wrap(new byte[] {1, 2, 3}));
        ByteBuffer frame = new ExtensionHeader((short) 30000, (short) 0, 9, null).responseFrame(response.toStruct());
        assertThat(frame.getInt()).isEqualTo(frame.remaining());
        assertThat(frame.getInt()).isEqualTo(9);
        ShareBrowse.Response read = ShareBrowse.Response.read(frame);
        assertThat(read.hidden()).isEqualTo(response.hidden());
        assertThat(read.records()).isEqualTo(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        assertThat(read.startOffset()).isEqualTo(5);
        assertThat(read.endOffset()).isEqualTo(20);
        assertThat(read.nextOffset()).isEqualTo(12);
        assertThat(read.isHidden(5)).isFalse();
        assertThat(read.isHidden(6)).isTrue();
        assertThat(read.isHidden(7)).isTrue();
        assertThat(read.isHidden(8)).isFalse();
        assertThat(read.isHidden(10)).isTrue();
        assertThat(read.isHidden(11)).isFalse();
    }

    @Test
    void truncatedBodiesAreRejectedNamingTheApi() {
        ByteBuffer body = ByteBuffer.allocate(new ShareBrowse.Request("g", "t", 0, 0, 1).toStruct().sizeOf());
        new ShareBrowse.Request("g", "t", 0, 0, 1).toStruct().writeTo(body);
        body.flip().limit(body.limit() - 3);
        assertThatThrownBy(() -> ShareBrowse.Request.read(body)).isInstanceOf(ExtensionFormatException.class)
                .hasMessageContaining("ShareBrowse request");
        assertThatThrownBy(() -> ExtensionHeader.read(ByteBuffer.wrap(new byte[] {0x75, 0x30, 0})))
                .isInstanceOf(ExtensionFormatException.class).hasMessageContaining("header");
    }

    @Test
    void reservedRangeIsRecognised() {
        assertThat(ExtensionApi.isReserved((short) 30000)).isTrue();
        assertThat(ExtensionApi.isReserved((short) 30099)).isTrue();
        assertThat(ExtensionApi.isReserved((short) 1)).isFalse();
        assertThat(ExtensionApi.forKey((short) 30000)).contains(ExtensionApi.SHARE_BROWSE);
        assertThat(ExtensionApi.forKey((short) 30098)).isEmpty();
    }
}
