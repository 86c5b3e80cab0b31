package dev.millrace.protocol.ext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.List;

import org.apache.kafka.common.protocol.types.Struct;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * TxnShareAcknowledge version 1 (key 30001) and TxnAddSharePartition (key 30007) through their documented layouts:
 * round trips, the bytes, and bodies they must refuse.
 */
@Timeout(10)
class TxnShareCodecTest {

    private static ByteBuffer bytes(Struct struct) {
        ByteBuffer body = ByteBuffer.allocate(struct.sizeOf());
        struct.writeTo(body);
        return body.flip();
    }

    private static ByteBuffer string(ByteBuffer out, String s) {
        return out.putShort((short) s.length()).put(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    @Test
    void shouldServeOnlyVersionOneOfTxnShareAcknowledge() {
        assertThat(ExtensionApi.TXN_SHARE_ACKNOWLEDGE.minVersion()).isEqualTo((short) 1);
        assertThat(ExtensionApi.TXN_SHARE_ACKNOWLEDGE.maxVersion()).isEqualTo(TxnShareAcknowledge.VERSION);
        assertThat(ExtensionApi.forKey((short) 30007)).contains(ExtensionApi.TXN_ADD_SHARE_PARTITION);
    }

    @Test
    void shouldKeepTheLayoutOfTxnShareAcknowledge() {
        // string transactional_id, string group_id, string member_id, string topic, int32 partition, array int64
        TxnShareAcknowledge.Request request = new TxnShareAcknowledge.Request("t", "g", "m", "q", 2, List.of(5L, 9L));
        ByteBuffer expected = ByteBuffer.allocate(3 * 4 + 3 + 4 + 4 + 16);
        string(string(string(string(expected, "t"), "g"), "m"), "q").putInt(2).putInt(2).putLong(5).putLong(9);
        assertThat(bytes(request.toStruct())).isEqualTo(expected.flip());
        assertThat(TxnShareAcknowledge.Request.read(bytes(request.toStruct()))).isEqualTo(request);
    }

    @Test
    void shouldKeepTheLayoutOfTxnAddSharePartition() {
        // string transactional_id, string topic, int32 partition
        TxnAddSharePartition.Request request = new TxnAddSharePartition.Request("tx", "q", 3);
        ByteBuffer expected = ByteBuffer.allocate(2 + 2 + 2 + 1 + 4);
        string(string(expected, "tx"), "q").putInt(3);
        assertThat(bytes(request.toStruct())).isEqualTo(expected.flip());
        assertThat(TxnAddSharePartition.Request.read(bytes(request.toStruct()))).isEqualTo(request);

        // int16 error_code, string error_message (nullable), int64 producer_id, int16 producer_epoch
        TxnAddSharePartition.Response ok = new TxnAddSharePartition.Response((short) 0, null, 4000L, (short) 7);
        assertThat(bytes(ok.toStruct())).isEqualTo(ByteBuffer.allocate(14).putShort((short) 0).putShort((short) -1)
                .putLong(4000L).putShort((short) 7).flip());
        assertThat(TxnAddSharePartition.Response.read(bytes(ok.toStruct()))).isEqualTo(ok);
        TxnAddSharePartition.Response error = TxnAddSharePartition.Response.error((short) 48, "no ongoing txn");
        assertThat(TxnAddSharePartition.Response.read(bytes(error.toStruct()))).isEqualTo(error);
        assertThat(error.producerId()).isEqualTo(-1L);
    }

    @Test
    void shouldRefuseTruncatedBodies() {
        assertThatThrownBy(() -> TxnAddSharePartition.Request.read(ByteBuffer.wrap(new byte[] {0, 2, 't'})))
                .isInstanceOf(ExtensionFormatException.class)
                .hasMessageStartingWith("malformed TxnAddSharePartition request");
        assertThatThrownBy(() -> TxnAddSharePartition.Response.read(ByteBuffer.wrap(new byte[] {0, 0, -1, -1, 0})))
                .isInstanceOf(ExtensionFormatException.class)
                .hasMessageStartingWith("malformed TxnAddSharePartition response");
        assertThatThrownBy(() -> TxnShareAcknowledge.Request.read(ByteBuffer.wrap(new byte[] {0, 1, 't', 0})))
                .isInstanceOf(ExtensionFormatException.class)
                .hasMessageStartingWith("malformed TxnShareAcknowledge request");
    }
}
