package dev.millrace.ra.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;

import javax.naming.Reference;
import javax.naming.StringRefAddr;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.jms.MillraceQueue;
import jakarta.jms.InvalidDestinationException;

/** The administered objects as JavaBeans: their property, equality, serialization and JNDI reference. */
@Timeout(20)
class AdminObjectsTest {

    static MillraceQueueAdminObject queue(String name) {
        MillraceQueueAdminObject queue = new MillraceQueueAdminObject();
        queue.setName(name);
        return queue;
    }

    static MillraceTopicAdminObject topic(String name) {
        MillraceTopicAdminObject topic = new MillraceTopicAdminObject();
        topic.setName(name);
        return topic;
    }

    @Test
    void shouldBeEqualWhenSameKindAndName() throws Exception {
        assertThat(queue("orders")).isEqualTo(queue("orders")).hasSameHashCodeAs(queue("orders"));
        assertThat(queue("orders")).isNotEqualTo(queue("invoices"));
        assertThat(queue("orders")).isNotEqualTo(topic("orders"));
        assertThat(queue("orders")).isNotEqualTo(new MillraceQueue("orders"));
        assertThat(new MillraceQueueAdminObject()).isEqualTo(new MillraceQueueAdminObject());
        assertThat(queue("orders").getQueueName()).isEqualTo("orders");
        assertThat(topic("prices").getTopicName()).isEqualTo("prices");
        assertThat(queue("orders")).hasToString("queue://orders");
        assertThat(topic("prices")).hasToString("topic://prices");
    }

    @Test
    void shouldNamePropertyWhenNameIsInvalid() {
        assertThatThrownBy(() -> queue("no spaces")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("name: 'no spaces' is not a destination name");
        assertThatThrownBy(() -> topic("")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("name: '' is not a destination name");
    }

    @Test
    void shouldThrowInvalidDestinationWhenNameWasNeverSet() {
        assertThatThrownBy(() -> new MillraceQueueAdminObject().getQueueName())
                .isInstanceOf(InvalidDestinationException.class)
                .hasMessage("MillraceQueueAdminObject has no name: set its config-property 'name' to the queue's name");
        assertThatThrownBy(() -> new MillraceTopicAdminObject().getTopicName())
                .isInstanceOf(InvalidDestinationException.class).hasMessageContaining("topic's name");
    }

    @Test
    void shouldSurviveSerializationRoundTrip() throws Exception {
        MillraceQueueAdminObject queue = queue("orders");
        queue.setReference(new Reference(MillraceQueueAdminObject.class.getName(),
                new StringRefAddr("jndiName", "java:/jms/orders")));
        Object copy = roundTrip(queue);
        assertThat(copy).isInstanceOf(MillraceQueueAdminObject.class).isEqualTo(queue);
        assertThat(((MillraceQueueAdminObject) copy).getQueueName()).isEqualTo("orders");
        assertThat(((MillraceQueueAdminObject) copy).getReference()).isEqualTo(queue.getReference());
        Object topicCopy = roundTrip(topic("prices"));
        assertThat(topicCopy).isInstanceOf(MillraceTopicAdminObject.class).isEqualTo(topic("prices"));
    }

    @Test
    void shouldRebuildFromOwnReferenceAndKeepReferenceContainerSet() throws Exception {
        AdminObjectFactory factory = new AdminObjectFactory();
        assertThat(factory.getObjectInstance(queue("orders").getReference(), null, null, null))
                .isEqualTo(queue("orders"));
        assertThat(factory.getObjectInstance(topic("prices").getReference(), null, null, null))
                .isEqualTo(topic("prices"));
        assertThat(factory.getObjectInstance(new MillraceQueue("orders").getReference(), null, null, null)).isNull();
        assertThat(factory.getObjectInstance("not a reference", null, null, null)).isNull();

        Reference containers = new Reference(MillraceTopicAdminObject.class.getName());
        MillraceTopicAdminObject topic = topic("prices");
        topic.setReference(containers);
        assertThat(topic.getReference()).isSameAs(containers);
    }

    private static Object roundTrip(Object o) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(o);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            return in.readObject();
        }
    }
}
