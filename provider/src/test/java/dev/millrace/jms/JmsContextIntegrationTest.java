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
import jakarta.jms.JMSRuntimeException;
import jakarta.jms.Message;
import jakarta.jms.Queue;

/** The simplified API's JMSContext against a real broker: contexts made from contexts. */
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

    @Test
    void shouldRefuseAnUnknownSessionModeNamingIt() throws Exception {
        try (JMSContext context = broker.factory().createContext()) {
            assertThatThrownBy(() -> context.createContext(42)).isInstanceOf(JMSRuntimeException.class)
                    .hasMessageContaining("unknown session mode 42");
        }
    }
}
