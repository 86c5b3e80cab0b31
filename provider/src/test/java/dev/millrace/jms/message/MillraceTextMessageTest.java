package dev.millrace.jms.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.Serializable;

import jakarta.jms.JMSException;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotWriteableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class MillraceTextMessageTest {

    @Test
    void shouldHoldTextUntilClearBody() throws JMSException {
        MillraceTextMessage m = new MillraceTextMessage();
        assertThat(m.getText()).isNull();
        m.setText("hi");
        assertThat(m.getText()).isEqualTo("hi");
        m.clearBody();
        assertThat(m.getText()).isNull();
    }

    @Test
    void shouldMakeBodyReadOnlyOnReceiveAndWritableAfterClearBody() throws JMSException {
        MillraceTextMessage m = new MillraceTextMessage();
        m.setText("before");
        m.onReceived();
        assertThatThrownBy(() -> m.setText("after")).isInstanceOf(MessageNotWriteableException.class);
        assertThat(m.getText()).isEqualTo("before");
        m.clearBody();
        m.setText("after");
        assertThat(m.getText()).isEqualTo("after");
    }

    @Test
    void shouldReturnBodyAsStringOrItsSupertypes() throws JMSException {
        MillraceTextMessage m = new MillraceTextMessage();
        m.setText("body");
        assertThat(m.getBody(String.class)).isEqualTo("body");
        assertThat(m.getBody(CharSequence.class)).isEqualTo("body");
        assertThat(m.getBody(Object.class)).isEqualTo("body");
        assertThat(m.isBodyAssignableTo(String.class)).isTrue();
        assertThat(m.isBodyAssignableTo(Serializable.class)).isTrue();
        assertThat(m.isBodyAssignableTo(byte[].class)).isFalse();
        assertThatThrownBy(() -> m.getBody(byte[].class)).isInstanceOf(MessageFormatException.class);
        assertThatThrownBy(() -> m.getBody(Integer.class)).isInstanceOf(MessageFormatException.class);
    }

    @Test
    void shouldTreatNullTextAsNoBodyButEmptyTextAsBody() throws JMSException {
        MillraceTextMessage m = new MillraceTextMessage();
        assertThat(m.getBody(Integer.class)).isNull();
        assertThat(m.isBodyAssignableTo(Integer.class)).isTrue();
        m.setText("");
        assertThat(m.isBodyAssignableTo(Integer.class)).isFalse();
        assertThat(m.getBody(String.class)).isEmpty();
    }
}
