package dev.millrace.protocol.ext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import javax.transaction.xa.XAException;

import org.apache.kafka.common.protocol.types.Struct;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * XaPrepare, XaComplete and XaRecover (keys 30020..30022) and the Xid through their documented layouts: round
 * trips, the bytes, and the malformed bodies and Xids they must refuse with a message naming the part.
 */
@Timeout(10)
class XaCodecTest {

    private static final XaXid XID = new XaXid(4660, "order1".getBytes(StandardCharsets.UTF_8), new byte[] {1});

    private static ByteBuffer bytes(Struct struct) {
        ByteBuffer body = ByteBuffer.allocate(struct.sizeOf());
        struct.writeTo(body);
        return body.flip();
    }

    private static ByteBuffer string(ByteBuffer out, String s) {
        return out.putShort((short) s.length()).put(s.getBytes(StandardCharsets.UTF_8));
    }

    private static ByteBuffer xid(ByteBuffer out) {
        return out.putInt(4660).putInt(6).put("order1".getBytes(StandardCharsets.UTF_8)).putInt(1).put((byte) 1);
    }

    @Test
    void shouldListTheXaKeys() {
        assertThat(ExtensionApi.forKey((short) 30020)).contains(ExtensionApi.XA_PREPARE);
        assertThat(ExtensionApi.forKey((short) 30021)).contains(ExtensionApi.XA_COMPLETE);
        assertThat(ExtensionApi.forKey((short) 30022)).contains(ExtensionApi.XA_RECOVER);
    }

    @Test
    void shouldKeepTheLayoutOfXaPrepare() {
        XaPrepare.Request request = new XaPrepare.Request("tx", 4000L, (short) 3, XID);
        ByteBuffer expected = ByteBuffer.allocate(2 + 2 + 8 + 2 + 4 + 4 + 6 + 4 + 1);
        xid(string(expected, "tx").putLong(4000L).putShort((short) 3));
        assertThat(bytes(request.toStruct())).isEqualTo(expected.flip());
        assertThat(XaPrepare.Request.read(bytes(request.toStruct()))).isEqualTo(request);

        XaPrepare.Response ok = new XaPrepare.Response((short) 0, null, XaCodes.XA_OK, 4000L, (short) 3);
        assertThat(bytes(ok.toStruct())).isEqualTo(ByteBuffer.allocate(2 + 2 + 4 + 8 + 2).putShort((short) 0)
                .putShort((short) -1).putInt(0).putLong(4000L).putShort((short) 3).flip());
        assertThat(XaPrepare.Response.read(bytes(ok.toStruct()))).isEqualTo(ok);
    }

    @Test
    void shouldKeepTheLayoutOfXaComplete() {
        XaComplete.Request request = new XaComplete.Request("tx", XID, XaComplete.Action.ROLLBACK, true);
        ByteBuffer expected = ByteBuffer.allocate(2 + 2 + 4 + 4 + 6 + 4 + 1 + 1 + 1);
        xid(string(expected, "tx")).put((byte) 1).put((byte) 1);
        assertThat(bytes(request.toStruct())).isEqualTo(expected.flip());
        assertThat(XaComplete.Request.read(bytes(request.toStruct()))).isEqualTo(request);

        XaComplete.Response answer = new XaComplete.Response((short) 0, "m", XaCodes.XA_HEURRB);
        assertThat(XaComplete.Response.read(bytes(answer.toStruct()))).isEqualTo(answer);
    }

    @Test
    void shouldKeepTheLayoutOfXaRecover() {
        assertThat(bytes(new XaRecover.Request(null).toStruct())).isEqualTo(ByteBuffer.allocate(2)
                .putShort((short) -1).flip());
        XaRecover.Branch branch = new XaRecover.Branch("tx", XID, XaRecover.BranchState.PREPARED, 4000L, (short) 3,
                1_000L, 50L, 2);
        XaRecover.Response response = new XaRecover.Response((short) 0, null, 3, List.of(0, 2), List.of(branch));
        ByteBuffer expected = ByteBuffer.allocate(2 + 2 + 4 + 4 + 8 + 4 + (2 + 2 + 4 + 4 + 6 + 4 + 1) + 1 + 8 + 2
                + 8 + 8 + 4);
        expected.putShort((short) 0).putShort((short) -1).putInt(3).putInt(2).putInt(0).putInt(2).putInt(1);
        xid(string(expected, "tx")).put((byte) 0).putLong(4000L).putShort((short) 3).putLong(1_000L).putLong(50L)
                .putInt(2);
        assertThat(bytes(response.toStruct())).isEqualTo(expected.flip());
        assertThat(XaRecover.Response.read(bytes(response.toStruct()))).isEqualTo(response);
        assertThat(XaRecover.BranchState.PREPARED.isRecoverable()).isTrue();
        assertThat(XaRecover.BranchState.COMMITTED.isRecoverable()).isFalse();
    }

    @Test
    void shouldRefuseAXidOutOfBoundsNamingThePart() {
        byte[] big = new byte[65];
        assertThatThrownBy(() -> new XaXid(1, big, new byte[0])).isInstanceOf(ExtensionFormatException.class)
                .hasMessageContaining("gtrid").hasMessageContaining("65");
        assertThatThrownBy(() -> new XaXid(1, new byte[1], big)).hasMessageContaining("bqual");
        assertThatThrownBy(() -> new XaXid(1, new byte[0], new byte[0])).hasMessageContaining("gtrid");
        assertThatThrownBy(() -> new XaXid(-1, new byte[1], new byte[0])).hasMessageContaining("null Xid");

        ByteBuffer tooLong = string(ByteBuffer.allocate(2 + 2 + 8 + 2 + 4 + 4 + 65 + 4), "tx").putLong(-1)
                .putShort((short) -1).putInt(1).putInt(65).put(big).putInt(0).flip();
        assertThatThrownBy(() -> XaPrepare.Request.read(tooLong)).isInstanceOf(ExtensionFormatException.class)
                .hasMessageContaining("gtrid must hold 1..64 bytes, not 65");
    }

    @Test
    void shouldRefuseMalformedBodies() {
        ByteBuffer negative = string(ByteBuffer.allocate(64), "tx").putLong(-1).putShort((short) -1).putInt(1)
                .putInt(-5).flip();
        assertThatThrownBy(() -> XaPrepare.Request.read(negative)).isInstanceOf(ExtensionFormatException.class)
                .hasMessageContaining("malformed XaPrepare request");
        ByteBuffer truncated = string(ByteBuffer.allocate(64), "tx").putLong(-1).flip();
        assertThatThrownBy(() -> XaPrepare.Request.read(truncated)).isInstanceOf(ExtensionFormatException.class)
                .hasMessageContaining("malformed XaPrepare request");
        ByteBuffer badAction = xid(string(ByteBuffer.allocate(64), "tx")).put((byte) 7).put((byte) 0).flip();
        assertThatThrownBy(() -> XaComplete.Request.read(badAction)).hasMessageContaining("action 7");
        ByteBuffer heuristicForget = xid(string(ByteBuffer.allocate(64), "tx")).put((byte) 2).put((byte) 1).flip();
        assertThatThrownBy(() -> XaComplete.Request.read(heuristicForget)).hasMessageContaining("not forget");
    }

    @Test
    void shouldReadAndPrintTheTextForm() {
        assertThat(XID.toString()).isEqualTo("4660:6f7264657231:01");
        assertThat(XaXid.parse("4660:6f7264657231:01")).isEqualTo(XID).hasSameHashCodeAs(XID);
        assertThat(XaXid.parse("7:ab:")).isEqualTo(new XaXid(7, new byte[] {(byte) 0xab}, new byte[0]));
        assertThatThrownBy(() -> XaXid.parse("7:zz:")).isInstanceOf(ExtensionFormatException.class)
                .hasMessageContaining("7:zz:");
        assertThatThrownBy(() -> XaXid.parse("7:ab")).hasMessageContaining("<formatId>:<gtrid hex>:<bqual hex>");
        ByteBuffer compact = ByteBuffer.allocate(XID.compactSize());
        XID.writeTo(compact);
        assertThat(XaXid.readFrom(compact.flip())).isEqualTo(XID);
    }

    @Test
    void shouldUseTheXaExceptionCodes() {
        assertThat(List.of(XaCodes.XA_OK, XaCodes.XA_RBROLLBACK, XaCodes.XA_RBTIMEOUT, XaCodes.XA_RETRY,
                XaCodes.XA_HEURMIX, XaCodes.XA_HEURRB, XaCodes.XA_HEURCOM, XaCodes.XAER_RMERR, XaCodes.XAER_NOTA,
                XaCodes.XAER_INVAL, XaCodes.XAER_PROTO, XaCodes.XAER_RMFAIL, XaCodes.XAER_DUPID)).containsExactly(
                javax.transaction.xa.XAResource.XA_OK, XAException.XA_RBROLLBACK, XAException.XA_RBTIMEOUT,
                XAException.XA_RETRY, XAException.XA_HEURMIX, XAException.XA_HEURRB, XAException.XA_HEURCOM,
                XAException.XAER_RMERR, XAException.XAER_NOTA, XAException.XAER_INVAL, XAException.XAER_PROTO,
                XAException.XAER_RMFAIL, XAException.XAER_DUPID);
        assertThat(XaCodes.name(XaCodes.XAER_NOTA)).isEqualTo("XAER_NOTA");
    }
}
