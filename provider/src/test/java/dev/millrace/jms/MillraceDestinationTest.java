package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.List;

import javax.naming.Reference;

import dev.millrace.jms.jndi.DestinationObjectFactory;
import dev.millrace.protocol.jms.DestinationType;
import dev.millrace.protocol.jms.JmsDestination;
import jakarta.jms.IllegalStateException;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class MillraceDestinationTest {

    @SuppressWarnings("unchecked")
    private static <T> T serializeAndBack(T object) throws IOException, ClassNotFoundException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(object);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            return (T) in.readObject();
        }
    }

    @Test
    void shouldCompareByKindAndName() throws JMSException {
        assertThat(new MillraceQueue("a")).isEqualTo(new MillraceQueue("a")).hasSameHashCodeAs(new MillraceQueue("a"))
                .isNotEqualTo(new MillraceQueue("b")).isNotEqualTo(new MillraceTopic("a"))
                .isNotEqualTo(new MillraceTemporaryQueue("a", null));
        assertThat(new MillraceTemporaryTopic("t", d -> { })).isEqualTo(new MillraceTemporaryTopic("t", null));
        assertThat(new MillraceQueue("a").getQueueName()).isEqualTo("a");
        assertThat(new MillraceTopic("b").getTopicName()).isEqualTo("b");
        assertThat(new MillraceTemporaryQueue("c", null).getQueueName()).isEqualTo("c");
        assertThat(new MillraceQueue("a")).hasToString("queue://a");
        assertThat(new MillraceTemporaryTopic("t", null)).hasToString("temp-topic://t");
    }

    @Test
    void shouldRefuseInvalidNamesWithTheReason() {
        assertThatThrownBy(() -> new MillraceQueue("a/b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'/'").hasMessageContaining("index 1");
        assertThatThrownBy(() -> new MillraceTopic("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MillraceTopic(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> MillraceDestination.validateName("x".repeat(300)))
                .isInstanceOf(InvalidDestinationException.class).hasMessageContaining("249");
    }

    @Test
    void shouldMapToAndFromTheWireForm() {
        List<MillraceDestination> all = List.of(new MillraceQueue("q"), new MillraceTopic("t"),
                new MillraceTemporaryQueue("tq", null), new MillraceTemporaryTopic("tt", null));
        for (MillraceDestination d : all) {
            JmsDestination wire = d.toWire();
            assertThat(wire.name()).isEqualTo(d.getName());
            assertThat(MillraceDestination.fromWire(wire)).isEqualTo(d);
        }
        assertThat(new MillraceTemporaryQueue("tq", null).type()).isEqualTo(DestinationType.TEMPORARY_QUEUE);
        assertThat(MillraceDestination.fromWire(null)).isNull();
    }

    @Test
    void shouldSurviveSerialization() throws Exception {
        assertThat(serializeAndBack(new MillraceQueue("q"))).isEqualTo(new MillraceQueue("q"));
        assertThat(serializeAndBack(new MillraceTopic("t"))).isEqualTo(new MillraceTopic("t"));
        MillraceTemporaryQueue temp = serializeAndBack(new MillraceTemporaryQueue("tq", d -> { }));
        assertThat(temp).isEqualTo(new MillraceTemporaryQueue("tq", null));
        assertThatThrownBy(temp::delete).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldRebuildQueuesAndTopicsFromTheirJndiReference() throws Exception {
        DestinationObjectFactory factory = new DestinationObjectFactory();
        Reference queueRef = new MillraceQueue("q").getReference();
        Reference topicRef = new MillraceTopic("t").getReference();
        assertThat(queueRef.getFactoryClassName()).isEqualTo(DestinationObjectFactory.class.getName());
        assertThat(factory.getObjectInstance(queueRef, null, null, null)).isEqualTo(new MillraceQueue("q"));
        assertThat(factory.getObjectInstance(topicRef, null, null, null)).isEqualTo(new MillraceTopic("t"));
        assertThat(factory.getObjectInstance("not a reference", null, null, null)).isNull();
        assertThat(factory.getObjectInstance(new Reference("other.Class"), null, null, null)).isNull();
    }

    @Test
    void shouldDeleteTemporaryDestinationsThroughTheirOwner() throws JMSException {
        List<MillraceDestination> deleted = new ArrayList<>();
        MillraceTemporaryQueue queue = new MillraceTemporaryQueue("tq", deleted::add);
        MillraceTemporaryTopic topic = new MillraceTemporaryTopic("tt", deleted::add);
        queue.delete();
        topic.delete();
        assertThat(deleted).containsExactly(queue, topic);
        assertThatThrownBy(() -> new MillraceTemporaryTopic("tt", null).delete())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("connection that created it");
    }

    @Test
    void shouldConvertForeignDestinationsByName() throws JMSException {
        assertThat(MillraceDestination.from(null)).isNull();
        MillraceQueue q = new MillraceQueue("q");
        assertThat(MillraceDestination.from(q)).isSameAs(q);
    }
}
