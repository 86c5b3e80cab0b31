package dev.millrace.ra.admin;

import static dev.millrace.ra.admin.AdminObjectsTest.queue;
import static dev.millrace.ra.admin.AdminObjectsTest.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.millrace.jms.MillraceConnectionFactory;
import dev.millrace.jms.MillraceQueue;
import dev.millrace.ra.it.MillraceBrokerExtension;
import dev.millrace.ra.outbound.MillraceManagedConnectionFactory;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.InvalidDestinationRuntimeException;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;

/**
 * The provider takes the administered objects wherever it takes a destination, against a real broker in this JVM:
 * directly and through the adapter's connection factory (no container).
 */
@ExtendWith(MillraceBrokerExtension.class)
@Timeout(60)
class AdminObjectsIntegrationTest {

    private static JMSContext client() {
        MillraceConnectionFactory f = new MillraceConnectionFactory(MillraceBrokerExtension.bootstrap());
        f.setRequestTimeoutMs(10_000);
        return f.createContext();
    }

    @Test
    void shouldSendAndReceiveThroughQueueAdminObjectAsTheQueueOfItsName() throws Exception {
        MillraceManagedConnectionFactory managed = new MillraceManagedConnectionFactory();
        managed.setBrokers(MillraceBrokerExtension.bootstrap());
        managed.setRequestTimeoutMs(10_000);
        ConnectionFactory adapterFactory = (ConnectionFactory) managed.createConnectionFactory();
        try (JMSContext client = client(); JMSContext outbound = adapterFactory.createContext()) {
            JMSConsumer consumer = client.createConsumer(queue("ra.admin.orders"));
            outbound.createProducer().setJMSReplyTo(queue("ra.admin.replies"))
                    .send(queue("ra.admin.orders"), "by-adapter");
            client.createProducer().send(new MillraceQueue("ra.admin.orders"), "by-provider-queue");
            // two producers: their messages may land on different partitions of the queue, in either order
            Map<String, Message> received = new HashMap<>();
            for (int i = 0; i < 2; i++) {
                Message m = consumer.receive(10_000);
                assertThat(m).as("message " + (i + 1) + " of 2").isNotNull();
                received.put(m.getBody(String.class), m);
            }
            assertThat(received).containsOnlyKeys("by-adapter", "by-provider-queue");
            Message byAdapter = received.get("by-adapter");
            assertThat(byAdapter.getJMSDestination()).isEqualTo(new MillraceQueue("ra.admin.orders"));
            assertThat(byAdapter.getJMSReplyTo()).isEqualTo(new MillraceQueue("ra.admin.replies"));
        }
    }

    @Test
    void shouldPublishAndSubscribeThroughTopicAdminObject() {
        try (JMSContext client = client()) {
            JMSConsumer subscriber = client.createConsumer(topic("ra.admin.prices"));
            client.createProducer().send(topic("ra.admin.prices"), "42");
            assertThat(subscriber.receiveBody(String.class, 10_000)).isEqualTo("42");
        }
    }

    @Test
    void shouldRefuseAdminObjectWithoutNameNamingTheProperty() {
        try (JMSContext client = client()) {
            assertThatThrownBy(() -> client.createProducer().send(new MillraceQueueAdminObject(), "lost"))
                    .isInstanceOf(InvalidDestinationRuntimeException.class)
                    .hasMessageContaining("config-property 'name'");
        }
    }
}
