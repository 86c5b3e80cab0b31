package dev.millrace.jms.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import dev.millrace.jms.MillraceQueue;
import jakarta.jms.DeliveryMode;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Header fields, acknowledge() and the body rules of a plain Message. */
@Timeout(20)
class MillraceMessageTest {

    @Test
    void shouldStartWithSpecDefaults() {
        MillraceMessage m = new MillraceMessage();
        assertThat(m.getJMSDeliveryMode()).isEqualTo(DeliveryMode.PERSISTENT);
        assertThat(m.getJMSPriority()).isEqualTo(Message.DEFAULT_PRIORITY);
        assertThat(m.getJMSExpiration()).isZero();
        assertThat(m.getJMSRedelivered()).isFalse();
        assertThat(m.getJMSMessageID()).isNull();
        assertThat(m.getJMSCorrelationID()).isNull();
        assertThat(m.getJMSCorrelationIDAsBytes()).isNull();
    }

    @Test
    void shouldKeepHeaderFieldsAsSet() {
        MillraceMessage m = new MillraceMessage();
        MillraceQueue q = new MillraceQueue("q");
        m.setJMSMessageID("ID:1");
        m.setJMSTimestamp(5);
        m.setJMSReplyTo(q);
        m.setJMSDestination(q);
        m.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT);
        m.setJMSRedelivered(true);
        m.setJMSType("t");
        m.setJMSExpiration(6);
        m.setJMSDeliveryTime(7);
        m.setJMSPriority(8);
        assertThat(m.getJMSMessageID()).isEqualTo("ID:1");
        assertThat(m.getJMSTimestamp()).isEqualTo(5);
        assertThat(m.getJMSReplyTo()).isSameAs(q);
        assertThat(m.getJMSDestination()).isSameAs(q);
        assertThat(m.getJMSDeliveryMode()).isEqualTo(DeliveryMode.NON_PERSISTENT);
        assertThat(m.getJMSRedelivered()).isTrue();
        assertThat(m.getJMSType()).isEqualTo("t");
        assertThat(m.getJMSExpiration()).isEqualTo(6);
        assertThat(m.getJMSDeliveryTime()).isEqualTo(7);
        assertThat(m.getJMSPriority()).isEqualTo(8);
    }

    @Test
    void shouldConvertCorrelationIdBetweenStringAndBytesAsUtf8() {
        MillraceMessage m = new MillraceMessage();
        m.setJMSCorrelationID("k\u00e9y");
        assertThat(m.getJMSCorrelationIDAsBytes()).isEqualTo("k\u00e9y".getBytes(StandardCharsets.UTF_8));
        byte[] raw = {1, 2, 3};
        m.setJMSCorrelationIDAsBytes(raw);
        raw[0] = 9;
        assertThat(m.getJMSCorrelationIDAsBytes()).containsExactly(1, 2, 3);
        assertThat(m.getJMSCorrelationID()).isEqualTo("\u0001\u0002\u0003");
        m.setJMSCorrelationID(null);
        assertThat(m.getJMSCorrelationIDAsBytes()).isNull();
    }

    @Test
    void shouldDelegateAcknowledgeToTheInjectedCallback() throws JMSException {
        MillraceMessage m = new MillraceMessage();
        m.acknowledge();
        List<Message> acknowledged = new ArrayList<>();
        m.setAcknowledgeCallback(acknowledged::add);
        m.acknowledge();
        assertThat(acknowledged).containsExactly(m);
        m.setAcknowledgeCallback(x -> {
            throw new IllegalStateException("session closed");
        });
        assertThatThrownBy(m::acknowledge).isInstanceOf(IllegalStateException.class).hasMessage("session closed");
    }

    @Test
    void shouldHaveNoBodyAssignableToAnything() throws JMSException {
        MillraceMessage m = new MillraceMessage();
        assertThat(m.getBody(String.class)).isNull();
        assertThat(m.getBody(byte[].class)).isNull();
        assertThat(m.isBodyAssignableTo(Integer.class)).isTrue();
        m.onReceived();
        m.clearBody();
        assertThat(m.getBody(Object.class)).isNull();
    }
}
