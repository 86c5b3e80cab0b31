package dev.millrace.jms.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

import jakarta.jms.JMSException;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotWriteableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class MillraceObjectMessageTest {

    static final class Unserializable implements Serializable {
        private static final long serialVersionUID = 1L;
        @SuppressWarnings("unused")
        private final Object notSerializable = new Object();
    }

    @Test
    void shouldSnapshotTheObjectWhenSet() throws JMSException {
        MillraceObjectMessage m = new MillraceObjectMessage();
        ArrayList<String> list = new ArrayList<>(List.of("a"));
        m.setObject(list);
        list.add("b");
        assertThat(m.getObject()).isEqualTo(List.of("a"));
        assertThat(m.getObject()).isNotSameAs(m.getObject());
    }

    @Test
    void shouldFailWithMessageFormatExceptionWhenObjectCannotBeSerialized() {
        MillraceObjectMessage m = new MillraceObjectMessage();
        assertThatThrownBy(() -> m.setObject(new Unserializable())).isInstanceOf(MessageFormatException.class)
                .hasMessageContaining("Unserializable");
    }

    @Test
    void shouldFollowReadOnlyAndClearBodyRules() throws JMSException {
        MillraceObjectMessage m = new MillraceObjectMessage();
        m.setObject("x");
        m.onReceived();
        assertThatThrownBy(() -> m.setObject("y")).isInstanceOf(MessageNotWriteableException.class);
        m.clearBody();
        assertThat(m.getObject()).isNull();
        m.setObject(7);
        assertThat(m.getObject()).isEqualTo(7);
    }

    @Test
    void shouldReturnBodyOnlyAsAnAssignableType() throws JMSException {
        MillraceObjectMessage m = new MillraceObjectMessage();
        assertThat(m.getBody(String.class)).isNull();
        assertThat(m.isBodyAssignableTo(String.class)).isTrue();
        m.setObject(new ArrayList<>(List.of(1)));
        assertThat(m.getBody(List.class)).isEqualTo(List.of(1));
        assertThat(m.getBody(Serializable.class)).isEqualTo(List.of(1));
        assertThat(m.isBodyAssignableTo(ArrayList.class)).isTrue();
        assertThat(m.isBodyAssignableTo(String.class)).isFalse();
        assertThatThrownBy(() -> m.getBody(String.class)).isInstanceOf(MessageFormatException.class);
    }

    @Test
    void shouldRefuseClassesTheDeserializationFilterRejects() throws JMSException {
        MillraceObjectMessage m = new MillraceObjectMessage();
        m.setObject(new ArrayList<>(List.of("a")));
        m.setDeserializationFilter(java.io.ObjectInputFilter.Config.createFilter("java.lang.String;!*"));
        assertThatThrownBy(m::getObject).isInstanceOf(MessageFormatException.class).hasMessageContaining("deserialize");
        assertThat(m.isBodyAssignableTo(List.class)).isFalse();
        m.setDeserializationFilter(java.io.ObjectInputFilter.Config.createFilter("java.util.ArrayList;java.lang.*;!*"));
        assertThat(m.getObject()).isEqualTo(List.of("a"));
    }

    @Test
    void shouldReportUndeserializableBodyAsFormatErrorAndNotAssignable() throws JMSException {
        MillraceObjectMessage m = new MillraceObjectMessage();
        m.decodeBody(new byte[] {1, 2, 3});
        assertThatThrownBy(m::getObject).isInstanceOf(MessageFormatException.class)
                .hasMessageContaining("deserialize");
        assertThatThrownBy(() -> m.getBody(Serializable.class)).isInstanceOf(MessageFormatException.class);
        assertThat(m.isBodyAssignableTo(Serializable.class)).isFalse();
    }
}
