package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSProducer;
import jakarta.jms.JMSRuntimeException;
import jakarta.jms.Message;
import jakarta.jms.MessageFormatRuntimeException;
import jakarta.jms.Queue;
import jakarta.jms.StreamMessage;
import jakarta.jms.TextMessage;

/** The simplified API's JMSContext against a real broker: contexts made from contexts, JMSConsumer.receiveBody. */
@Timeout(60)
class JmsContextIntegrationTest {

    @TempDir
    static Path dataDir;
    static TestBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBroker.start(dataDir);
    }

    @AfterAll
    static void stopBroker() throws Exception {
        broker.close();
    }

    /**
     * JMSContext.createContext javadoc: a context made with SESSION_TRANSACTED from another context has a transacted
     * session of its own: a rolled back send is discarded, a committed one delivered.
     */
    @Test
    void shouldCreateATransactedContextFromAContext() throws Exception {
        try (JMSContext context = broker.factory().createContext(JMSContext.AUTO_ACKNOWLEDGE);
             JMSContext tx = context.createContext(JMSContext.SESSION_TRANSACTED)) {
            assertThat(tx.getSessionMode()).isEqualTo(JMSContext.SESSION_TRANSACTED);
            assertThat(tx.getTransacted()).isTrue();
            Queue q = tx.createQueue("ctx.tx");
            tx.createProducer().send(q, "rolled back");
            tx.rollback();
            tx.createProducer().send(q, "committed");
            tx.commit();

            JMSConsumer reader = context.createConsumer(q);
            assertThat(reader.receiveBody(String.class, 10_000)).isEqualTo("committed");

            // and it consumes in its transaction: a rolled back receive comes again
            context.createProducer().send(q, "again");
            JMSConsumer txReader = tx.createConsumer(q);
            reader.close();
            assertThat(txReader.receiveBody(String.class, 10_000)).isEqualTo("again");
            tx.rollback();
            Message redelivered = txReader.receive(10_000);
            assertThat(redelivered.getBody(String.class)).isEqualTo("again");
            assertThat(redelivered.getJMSRedelivered()).isTrue();
            tx.commit();
        }
    }

    /** JMSContext.createContext javadoc: CLIENT_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE and AUTO_ACKNOWLEDGE work too. */
    @Test
    void shouldCreateContextsOfEveryAcknowledgeModeFromAContext() throws Exception {
        try (JMSContext context = broker.factory().createContext(JMSContext.SESSION_TRANSACTED)) {
            for (int mode : new int[] {JMSContext.AUTO_ACKNOWLEDGE, JMSContext.CLIENT_ACKNOWLEDGE,
                    JMSContext.DUPS_OK_ACKNOWLEDGE}) {
                try (JMSContext other = context.createContext(mode)) {
                    assertThat(other.getSessionMode()).isEqualTo(mode);
                    assertThat(other.getTransacted()).isFalse();
                    Queue q = other.createQueue("ctx.mode." + mode);
                    other.createProducer().send(q, "m" + mode);
                    JMSConsumer consumer = other.createConsumer(q);
                    if (mode == JMSContext.CLIENT_ACKNOWLEDGE) {
                        assertThat(consumer.receiveBody(String.class, 10_000)).isEqualTo("m" + mode);
                        other.recover();
                        Message again = consumer.receive(10_000);
                        assertThat(again.getJMSRedelivered()).isTrue();
                        other.acknowledge();
                    } else {
                        assertThat(consumer.receiveBody(String.class, 10_000)).isEqualTo("m" + mode);
                    }
                }
            }
        }
    }

    /**
     * JMSConsumer.receiveBody javadoc, AUTO_ACKNOWLEDGE and DUPS_OK_ACKNOWLEDGE: a plain Message, a StreamMessage, a
     * message without body and a body of another type fail with MessageFormatRuntimeException, and the message is
     * delivered again before any later one, not as a redelivery.
     */
    @Test
    void shouldRefuseBodilessAndMismatchedMessagesInReceiveBodyAndKeepThemForTheNextReceive() throws Exception {
        for (int mode : new int[] {JMSContext.AUTO_ACKNOWLEDGE, JMSContext.DUPS_OK_ACKNOWLEDGE}) {
            try (JMSContext context = broker.factory().createContext(mode)) {
                Queue q = context.createQueue("ctx.body." + mode);
                JMSProducer producer = context.createProducer();
                producer.send(q, context.createMessage());
                producer.send(q, context.createStreamMessage());
                producer.send(q, context.createTextMessage());
                producer.send(q, "text");
                producer.send(q, "last");
                JMSConsumer consumer = context.createConsumer(q);

                assertThatThrownBy(() -> consumer.receiveBody(String.class, 10_000))
                        .isInstanceOf(MessageFormatRuntimeException.class).hasMessageContaining("plain Message");
                assertDeliveredOnce(consumer.receive(10_000), Message.class);
                assertThatThrownBy(() -> consumer.receiveBody(Object.class, 10_000))
                        .isInstanceOf(MessageFormatRuntimeException.class).hasMessageContaining("StreamMessage");
                assertDeliveredOnce(consumer.receive(10_000), StreamMessage.class);
                assertThatThrownBy(() -> consumer.receiveBody(String.class, 10_000))
                        .isInstanceOf(MessageFormatRuntimeException.class).hasMessageContaining("no body");
                assertDeliveredOnce(consumer.receive(10_000), TextMessage.class);
                assertThatThrownBy(() -> consumer.receiveBody(Integer.class))
                        .isInstanceOf(MessageFormatRuntimeException.class).hasMessageContaining("Integer");
                assertThat(consumer.receiveBody(CharSequence.class, 10_000)).isEqualTo("text");
                assertThat(consumer.receiveBody(String.class)).isEqualTo("last");
            }
        }
    }

    private static void assertDeliveredOnce(Message m, Class<? extends Message> type) throws Exception {
        assertThat(m).isInstanceOf(type);
        assertThat(m.getJMSRedelivered()).isFalse();
        assertThat(m.getIntProperty("JMSXDeliveryCount")).isEqualTo(1);
    }

    /**
     * JMSConsumer.receiveBody javadoc, CLIENT_ACKNOWLEDGE and transacted: a refused message counts as delivered; the
     * next receive gets the next message, and recover or rollback bring the refused one back as a redelivery.
     */
    @Test
    void shouldCountARefusedReceiveBodyAsDeliveredInClientAcknowledgeAndTransactedContexts() throws Exception {
        for (int mode : new int[] {JMSContext.CLIENT_ACKNOWLEDGE, JMSContext.SESSION_TRANSACTED}) {
            try (JMSContext context = broker.factory().createContext(mode)) {
                Queue q = context.createQueue("ctx.body.delivered." + mode);
                try (JMSContext sender = context.createContext(JMSContext.AUTO_ACKNOWLEDGE)) {
                    sender.createProducer().send(q, sender.createMessage()).send(q, "next");
                }
                JMSConsumer consumer = context.createConsumer(q);
                assertThatThrownBy(() -> consumer.receiveBody(String.class, 10_000))
                        .isInstanceOf(MessageFormatRuntimeException.class);
                assertThat(consumer.receiveBody(String.class, 10_000)).isEqualTo("next");
                if (mode == JMSContext.CLIENT_ACKNOWLEDGE) {
                    context.recover();
                } else {
                    context.rollback();
                }
                Message again = consumer.receive(10_000);
                assertThat(again).isNotInstanceOf(TextMessage.class);
                assertThat(again.getJMSRedelivered()).isTrue();
                assertThat(consumer.receiveBody(String.class, 10_000)).isEqualTo("next");
                if (mode == JMSContext.CLIENT_ACKNOWLEDGE) {
                    context.acknowledge();
                } else {
                    context.commit();
                }
            }
        }
    }

    @Test
    void shouldRefuseAnUnknownSessionModeNamingIt() throws Exception {
        try (JMSContext context = broker.factory().createContext()) {
            assertThatThrownBy(() -> context.createContext(42)).isInstanceOf(JMSRuntimeException.class)
                    .hasMessageContaining("unknown session mode 42");
        }
    }
}
