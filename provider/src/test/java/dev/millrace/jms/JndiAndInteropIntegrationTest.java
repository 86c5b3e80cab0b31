package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;

import javax.naming.Context;
import javax.naming.InitialContext;
import javax.naming.NameNotFoundException;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.BytesMessage;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;
import jakarta.jms.Queue;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/** JNDI from jndi.properties, the simplified API, and Kafka-client interoperability, against a real broker. */
@Timeout(60)
class JndiAndInteropIntegrationTest {

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

    private static Context jndi() throws Exception {
        Hashtable<String, String> env = new Hashtable<>();
        env.put("connectionFactory.ConnectionFactory", broker.bootstrap() + "?prefetch=7&clientId=jndi-client");
        return new InitialContext(env);
    }

    @Test
    void shouldLookUpFactoryAndDestinationsFromJndiProperties() throws Exception {
        Context ctx = jndi();
        MillraceConnectionFactory cf = (MillraceConnectionFactory) ctx.lookup("ConnectionFactory");
        assertThat(cf.getPrefetch()).isEqualTo(7);
        assertThat(cf.getBrokers()).isEqualTo(broker.bootstrap());
        Queue orders = (Queue) ctx.lookup("jndiOrders");
        assertThat(orders.getQueueName()).isEqualTo("orders");
        assertThat(((Topic) ctx.lookup("jndiPrices")).getTopicName()).isEqualTo("prices");
        assertThat(((Queue) ctx.lookup("dynamicQueues/any.queue")).getQueueName()).isEqualTo("any.queue");
        assertThat(((Topic) ctx.lookup("dynamicTopics/any.topic")).getTopicName()).isEqualTo("any.topic");
        assertThatThrownBy(() -> ctx.lookup("missing")).isInstanceOf(NameNotFoundException.class);
        try (JMSContext context = ((ConnectionFactory) cf).createContext()) {
            assertThat(context.getClientID()).isEqualTo("jndi-client");
            context.createProducer().send(orders, "via jndi");
            JMSConsumer consumer = context.createConsumer(orders);
            assertThat(consumer.receiveBody(String.class, 10_000)).isEqualTo("via jndi");
        }
    }

    @Test
    void shouldReadKafkaProducerRecordsAsBytesAndTextMessages() throws Exception {
        try (JMSContext context = broker.factory().createContext()) {
            Topic topic = context.createTopic("interop.in");
            JMSConsumer consumer = context.createConsumer(topic);
            try (KafkaProducer<byte[], byte[]> kafka = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()), new ByteArraySerializer(),
                    new ByteArraySerializer())) {
                kafka.send(new ProducerRecord<>("interop.in", new byte[] {1, 2, 3})).get();
                ProducerRecord<byte[], byte[]> text = new ProducerRecord<>("interop.in",
                        "hello".getBytes(StandardCharsets.UTF_8));
                text.headers().add("jms.body.type", "text".getBytes(StandardCharsets.US_ASCII));
                kafka.send(text).get();
            }
            Message bytes = consumer.receive(10_000);
            assertThat(bytes).isInstanceOf(BytesMessage.class);
            assertThat(bytes.getBody(byte[].class)).containsExactly(1, 2, 3);
            Message text = consumer.receive(10_000);
            assertThat(((TextMessage) text).getText()).isEqualTo("hello");
        }
    }

    @Test
    void shouldWriteJmsMessagesThatAPlainKafkaConsumerReads() throws Exception {
        try (JMSContext context = broker.factory().createContext();
             KafkaConsumer<byte[], byte[]> kafka = new KafkaConsumer<>(Map.of(
                     ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()), new ByteArrayDeserializer(),
                     new ByteArrayDeserializer())) {
            Queue queue = context.createQueue("interop.out");
            TextMessage m = context.createTextMessage("to kafka");
            m.setIntProperty("count", 7);
            context.createProducer().send(queue, m);
            TopicPartition tp = new TopicPartition("interop.out", 0);
            kafka.assign(List.of(tp));
            kafka.seekToBeginning(List.of(tp));
            List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (records.isEmpty() && System.nanoTime() < deadline) {
                kafka.poll(Duration.ofMillis(200)).forEach(records::add);
            }
            assertThat(records).hasSize(1);
            ConsumerRecord<byte[], byte[]> r = records.get(0);
            assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("to kafka");
            assertThat(new String(r.headers().lastHeader("jms.body.type").value(), StandardCharsets.US_ASCII))
                    .isEqualTo("text");
            assertThat(r.headers().lastHeader("jms.prop.count").value()).containsExactly(5, 0, 0, 0, 7);
            assertThat(new String(r.headers().lastHeader("jms.message.id").value(), StandardCharsets.UTF_8))
                    .isEqualTo(m.getJMSMessageID()).startsWith("ID:");
        }
    }

    @Test
    void shouldThrowRuntimeVariantsFromTheSimplifiedApi() throws Exception {
        JMSContext context = broker.factory().createContext();
        context.close();
        assertThatThrownBy(() -> context.createTextMessage("x"))
                .isInstanceOf(jakarta.jms.IllegalStateRuntimeException.class);
        try (JMSContext c2 = broker.factory().createContext()) {
            assertThatThrownBy(() -> c2.createProducer().send(null, "x"))
                    .isInstanceOf(jakarta.jms.InvalidDestinationRuntimeException.class);
        }
    }
}
