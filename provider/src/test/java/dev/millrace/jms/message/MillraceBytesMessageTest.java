package dev.millrace.jms.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.jms.JMSException;
import jakarta.jms.MessageEOFException;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotReadableException;
import jakarta.jms.MessageNotWriteableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class MillraceBytesMessageTest {

    private final MillraceBytesMessage m = new MillraceBytesMessage();

    @Test
    void shouldReadBackEveryTypeInOrderAfterReset() throws JMSException {
        m.writeBoolean(true);
        m.writeByte((byte) -1);
        m.writeShort((short) -2);
        m.writeChar('\u20ac');
        m.writeInt(3);
        m.writeLong(4L);
        m.writeFloat(5.5f);
        m.writeDouble(6.5d);
        m.writeUTF("s\u00fc");
        m.writeBytes(new byte[] {1, 2, 3});
        m.writeBytes(new byte[] {9, 4, 5, 9}, 1, 2);
        m.reset();
        assertThat(m.readBoolean()).isTrue();
        assertThat(m.readUnsignedByte()).isEqualTo(255);
        assertThat(m.readUnsignedShort()).isEqualTo(65534);
        assertThat(m.readChar()).isEqualTo('\u20ac');
        assertThat(m.readInt()).isEqualTo(3);
        assertThat(m.readLong()).isEqualTo(4L);
        assertThat(m.readFloat()).isEqualTo(5.5f);
        assertThat(m.readDouble()).isEqualTo(6.5d);
        assertThat(m.readUTF()).isEqualTo("s\u00fc");
        byte[] buf = new byte[10];
        assertThat(m.readBytes(buf)).isEqualTo(5);
        assertThat(buf).startsWith(1, 2, 3, 4, 5);
        assertThat(m.readBytes(buf)).isEqualTo(-1);
    }

    @Test
    void shouldUseDataOutputLayout() throws JMSException {
        m.writeInt(0x01020304);
        m.writeShort((short) 0x0506);
        assertThat(m.encodeBody()).containsExactly(1, 2, 3, 4, 5, 6);
    }

    @Test
    void shouldBeWriteOnlyUntilReset() throws JMSException {
        m.writeInt(1);
        assertThatThrownBy(m::readInt).isInstanceOf(MessageNotReadableException.class);
        assertThatThrownBy(m::getBodyLength).isInstanceOf(MessageNotReadableException.class);
        assertThatThrownBy(() -> m.readBytes(new byte[1])).isInstanceOf(MessageNotReadableException.class);
        m.reset();
        assertThat(m.getBodyLength()).isEqualTo(4);
        assertThatThrownBy(() -> m.writeInt(2)).isInstanceOf(MessageNotWriteableException.class);
        assertThatThrownBy(() -> m.writeObject(2)).isInstanceOf(MessageNotWriteableException.class);
    }

    @Test
    void shouldRestartReadingOnEveryReset() throws JMSException {
        m.writeInt(42);
        m.reset();
        assertThat(m.readInt()).isEqualTo(42);
        m.reset();
        assertThat(m.readInt()).isEqualTo(42);
    }

    @Test
    void shouldThrowEofWithoutConsumingAPartialValue() throws JMSException {
        m.writeShort((short) 7);
        m.reset();
        assertThatThrownBy(m::readInt).isInstanceOf(MessageEOFException.class);
        assertThat(m.readShort()).isEqualTo((short) 7);
        assertThatThrownBy(m::readByte).isInstanceOf(MessageEOFException.class);
        assertThatThrownBy(m::readUTF).isInstanceOf(MessageEOFException.class);
    }

    @Test
    void shouldReadBytesInPiecesAndCheckLength() throws JMSException {
        m.writeBytes(new byte[] {1, 2, 3, 4, 5});
        m.reset();
        byte[] buf = new byte[4];
        assertThat(m.readBytes(buf, 2)).isEqualTo(2);
        assertThat(buf).startsWith(1, 2);
        assertThat(m.readBytes(buf)).isEqualTo(3);
        assertThat(buf).startsWith(3, 4, 5);
        assertThat(m.readBytes(buf)).isEqualTo(-1);
        assertThatThrownBy(() -> m.readBytes(buf, 5)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> m.readBytes(buf, -1)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void shouldWriteObjectsOfTheAllowedClassesOnly() throws JMSException {
        m.writeObject(1);
        m.writeObject("x");
        m.writeObject('c');
        m.writeObject(new byte[] {7});
        m.writeObject(2L);
        m.writeObject(true);
        m.writeObject((byte) 3);
        m.writeObject((short) 4);
        m.writeObject(1.5f);
        m.writeObject(2.5d);
        assertThatThrownBy(() -> m.writeObject(new Object())).isInstanceOf(MessageFormatException.class);
        assertThatThrownBy(() -> m.writeObject(null)).isInstanceOf(NullPointerException.class);
        m.reset();
        assertThat(m.readInt()).isEqualTo(1);
        assertThat(m.readUTF()).isEqualTo("x");
        assertThat(m.readChar()).isEqualTo('c');
        assertThat(m.readByte()).isEqualTo((byte) 7);
        assertThat(m.readLong()).isEqualTo(2L);
        assertThat(m.readBoolean()).isTrue();
        assertThat(m.readByte()).isEqualTo((byte) 3);
        assertThat(m.readShort()).isEqualTo((short) 4);
        assertThat(m.readFloat()).isEqualTo(1.5f);
        assertThat(m.readDouble()).isEqualTo(2.5d);
    }

    @Test
    void shouldClearBodyBackToEmptyWriteOnly() throws JMSException {
        m.writeInt(1);
        m.reset();
        m.clearBody();
        assertThatThrownBy(m::readInt).isInstanceOf(MessageNotReadableException.class);
        m.writeByte((byte) 2);
        m.reset();
        assertThat(m.getBodyLength()).isEqualTo(1);
        assertThat(m.readByte()).isEqualTo((byte) 2);
    }

    @Test
    void shouldBeReadOnlyAndReadableWhenReceived() throws JMSException {
        m.writeInt(5);
        m.onReceived();
        assertThat(m.readInt()).isEqualTo(5);
        assertThatThrownBy(() -> m.writeInt(1)).isInstanceOf(MessageNotWriteableException.class);
    }

    @Test
    void shouldReturnWholeBodyFromGetBodyAndResetAroundIt() throws JMSException {
        m.writeBytes(new byte[] {1, 2, 3});
        assertThat(m.getBody(byte[].class)).containsExactly(1, 2, 3);
        assertThat(m.readByte()).isEqualTo((byte) 1);
        assertThat(m.getBody(Object.class)).isEqualTo(new byte[] {1, 2, 3});
        assertThat(m.readByte()).as("getBody resets after use").isEqualTo((byte) 1);
        assertThat(m.isBodyAssignableTo(byte[].class)).isTrue();
        assertThat(m.isBodyAssignableTo(String.class)).isFalse();
        assertThatThrownBy(() -> m.getBody(String.class)).isInstanceOf(MessageFormatException.class);
    }

    @Test
    void shouldTreatEmptyBodyAsNoBody() throws JMSException {
        assertThat(m.getBody(String.class)).isNull();
        assertThat(m.isBodyAssignableTo(String.class)).isTrue();
        m.reset();
        assertThat(m.getBody(Long.class)).isNull();
    }
}
