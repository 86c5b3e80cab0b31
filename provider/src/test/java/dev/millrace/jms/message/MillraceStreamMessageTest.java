package dev.millrace.jms.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;

import jakarta.jms.JMSException;
import jakarta.jms.MessageEOFException;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotReadableException;
import jakarta.jms.MessageNotWriteableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(20)
class MillraceStreamMessageTest {

    private final MillraceStreamMessage m = new MillraceStreamMessage();

    static Stream<Arguments> bodyTable() {
        return ConversionTable.cells(ConversionTable.BODY_TYPES).stream();
    }

    static void write(MillraceStreamMessage m, String type, Object v) throws JMSException {
        switch (type) {
            case "boolean": m.writeBoolean((Boolean) v); break;
            case "byte": m.writeByte((Byte) v); break;
            case "short": m.writeShort((Short) v); break;
            case "char": m.writeChar((Character) v); break;
            case "int": m.writeInt((Integer) v); break;
            case "long": m.writeLong((Long) v); break;
            case "float": m.writeFloat((Float) v); break;
            case "double": m.writeDouble((Double) v); break;
            case "String": m.writeString((String) v); break;
            default: m.writeBytes((byte[]) v); break;
        }
    }

    static Object read(MillraceStreamMessage m, String type) throws JMSException {
        switch (type) {
            case "boolean": return m.readBoolean();
            case "byte": return m.readByte();
            case "short": return m.readShort();
            case "char": return m.readChar();
            case "int": return m.readInt();
            case "long": return m.readLong();
            case "float": return m.readFloat();
            case "double": return m.readDouble();
            case "String": return m.readString();
            default: {
                byte[] buf = new byte[16];
                int n = m.readBytes(buf);
                return java.util.Arrays.copyOf(buf, n);
            }
        }
    }

    @ParameterizedTest(name = "{0} read as {1}")
    @MethodSource("bodyTable")
    void shouldFollowTheConversionTableAndNotMoveOnFailure(String written, String read, String expected)
            throws JMSException {
        write(m, written, ConversionTable.SAMPLES.get(written));
        m.writeString("next");
        m.reset();
        if (expected == null) {
            assertThatThrownBy(() -> read(m, read)).isInstanceOf(MessageFormatException.class);
            assertThat(ConversionTable.show(m.readObject())).as("position unchanged after a failed read")
                    .isEqualTo(ConversionTable.show(ConversionTable.SAMPLES.get(written)));
        } else {
            assertThat(ConversionTable.show(read(m, read))).isEqualTo(expected);
        }
        assertThat(m.readString()).isEqualTo("next");
    }

    @Test
    void shouldNotMoveWhenStringDoesNotParse() throws JMSException {
        m.writeString("abc");
        m.reset();
        assertThatThrownBy(m::readInt).isInstanceOf(NumberFormatException.class);
        assertThat(m.readString()).isEqualTo("abc");
    }

    @Test
    void shouldReadNullAsValueOfNull() throws JMSException {
        for (int i = 0; i < 4; i++) {
            m.writeObject(null);
        }
        m.reset();
        assertThatThrownBy(m::readInt).isInstanceOf(NumberFormatException.class);
        assertThatThrownBy(m::readDouble).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(m::readChar).isInstanceOf(NullPointerException.class);
        assertThat(m.readBoolean()).isFalse();
        assertThat(m.readString()).isNull();
        assertThat(m.readObject()).isNull();
        assertThat(m.readBytes(new byte[1])).isEqualTo(-1);
        assertThatThrownBy(m::readObject).isInstanceOf(MessageEOFException.class);
    }

    @Test
    void shouldReadByteArrayInPiecesAndRefuseOtherReadsMeanwhile() throws JMSException {
        m.writeBytes(new byte[] {1, 2, 3, 4, 5});
        m.writeInt(6);
        m.reset();
        byte[] buf = new byte[2];
        assertThat(m.readBytes(buf)).isEqualTo(2);
        assertThat(buf).containsExactly(1, 2);
        assertThatThrownBy(m::readInt).isInstanceOf(MessageFormatException.class).hasMessageContaining("partly read");
        assertThatThrownBy(m::readObject).isInstanceOf(MessageFormatException.class);
        assertThat(m.readBytes(buf)).isEqualTo(2);
        assertThat(buf).containsExactly(3, 4);
        assertThat(m.readBytes(buf)).isEqualTo(1);
        assertThat(buf[0]).isEqualTo((byte) 5);
        assertThat(m.readInt()).isEqualTo(6);
    }

    @Test
    void shouldReturnMinusOneAfterAnExactFullBuffer() throws JMSException {
        m.writeBytes(new byte[] {1, 2});
        m.writeBoolean(true);
        m.reset();
        byte[] buf = new byte[2];
        assertThat(m.readBytes(buf)).isEqualTo(2);
        assertThatThrownBy(m::readBoolean).isInstanceOf(MessageFormatException.class);
        assertThat(m.readBytes(buf)).isEqualTo(-1);
        assertThat(m.readBoolean()).isTrue();
    }

    @Test
    void shouldReturnZeroForEmptyArrayThenMinusOneAndFailOnNonArray() throws JMSException {
        m.writeBytes(new byte[0]);
        m.writeInt(1);
        m.reset();
        assertThat(m.readBytes(new byte[4])).isZero();
        assertThat(m.readBytes(new byte[4])).as("end of the empty field").isEqualTo(-1);
        assertThatThrownBy(() -> m.readBytes(new byte[4])).isInstanceOf(MessageFormatException.class);
        assertThat(m.readInt()).isEqualTo(1);
    }

    /** StreamMessage.readBytes javadoc: -1 once the end of the byte field has been reached, not the next field. */
    @Test
    void shouldReturnMinusOneAfterAFieldReadWholeBeforeTheNextByteField() throws JMSException {
        m.writeBytes(new byte[] {1, 2, 3});
        m.writeBytes(new byte[] {4});
        m.writeObject(null);
        m.writeString("end");
        m.reset();
        byte[] buf = new byte[2];
        assertThat(m.readBytes(buf)).isEqualTo(2);
        assertThat(m.readBytes(buf)).isEqualTo(1);
        assertThat(buf[0]).isEqualTo((byte) 3);
        assertThat(m.readBytes(buf)).as("end of the first field").isEqualTo(-1);
        assertThat(m.readBytes(buf)).isEqualTo(1);
        assertThat(m.readBytes(buf)).as("end of the second field").isEqualTo(-1);
        assertThat(m.readBytes(buf)).as("a null field").isEqualTo(-1);
        assertThat(m.readString()).isEqualTo("end");
        m.reset();
        assertThat(m.readBytes(new byte[8])).isEqualTo(3);
        assertThat((byte[]) m.readObject()).as("another read goes straight on").containsExactly(4);
    }

    @Test
    void shouldWritePartOfAnArrayAndCopyArrays() throws JMSException {
        byte[] data = {1, 2, 3, 4};
        m.writeBytes(data, 1, 2);
        m.writeBytes(data);
        data[0] = 9;
        m.reset();
        assertThat((byte[]) m.readObject()).containsExactly(2, 3);
        assertThat((byte[]) m.readObject()).containsExactly(1, 2, 3, 4);
    }

    @Test
    void shouldThrowEofAtTheEnd() throws JMSException {
        m.writeInt(1);
        m.reset();
        m.readInt();
        assertThatThrownBy(m::readInt).isInstanceOf(MessageEOFException.class);
        assertThatThrownBy(m::readString).isInstanceOf(MessageEOFException.class);
        assertThatThrownBy(() -> m.readBytes(new byte[1])).isInstanceOf(MessageEOFException.class);
    }

    @Test
    void shouldBeWriteOnlyUntilResetAndReadOnlyAfter() throws JMSException {
        m.writeInt(1);
        assertThatThrownBy(m::readInt).isInstanceOf(MessageNotReadableException.class);
        assertThatThrownBy(() -> m.readBytes(new byte[1])).isInstanceOf(MessageNotReadableException.class);
        m.reset();
        assertThatThrownBy(() -> m.writeInt(2)).isInstanceOf(MessageNotWriteableException.class);
        assertThatThrownBy(() -> m.writeObject("x")).isInstanceOf(MessageNotWriteableException.class);
        assertThat(m.readInt()).isEqualTo(1);
        m.reset();
        assertThat(m.readInt()).as("reset rewinds").isEqualTo(1);
        m.clearBody();
        assertThatThrownBy(m::readInt).isInstanceOf(MessageNotReadableException.class);
        m.writeInt(3);
        m.reset();
        assertThat(m.readInt()).isEqualTo(3);
        assertThatThrownBy(m::readInt).isInstanceOf(MessageEOFException.class);
    }

    @Test
    void shouldRefuseObjectsOfOtherClasses() {
        assertThatThrownBy(() -> m.writeObject(new Object())).isInstanceOf(MessageFormatException.class);
    }

    @Test
    void shouldNeverGiveItsBodyThroughGetBody() throws JMSException {
        assertThatThrownBy(() -> m.getBody(Object.class)).isInstanceOf(MessageFormatException.class);
        assertThat(m.isBodyAssignableTo(Object.class)).isFalse();
        m.writeInt(1);
        assertThatThrownBy(() -> m.getBody(Object.class)).isInstanceOf(MessageFormatException.class);
    }

    @Test
    void shouldBeReadableFromTheStartWhenReceived() throws JMSException {
        m.writeInt(1);
        m.onReceived();
        assertThat(m.readInt()).isEqualTo(1);
        assertThatThrownBy(() -> m.writeInt(2)).isInstanceOf(MessageNotWriteableException.class);
    }
}
