package dev.millrace.samples.kafkainterop;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import dev.millrace.jms.MillraceConnectionFactory;

/**
 * Kafka clients and JMS on the same destinations:
 * <pre>
 *   KafkaProducer --records--> topic kafka-orders == JMS queue kafka-orders --> OrderProcessor (JMS listener)
 *   KafkaConsumer <--records-- topic kafka-order-events == JMS topic kafka-order-events <--events--'
 * </pre>
 * The producer writes each order with the order id as key; every other order carries header
 * {@code jms.body.type = text} (the marker of {@code protocol/.../jms/JmsRecordCodec.java}) and reaches JMS as a
 * TextMessage, the others as BytesMessages. The orders are written before the JMS consumer exists: a queue keeps
 * them. The Kafka consumer reads the events the JMS listener publishes, from where the topic ended when it started.
 * Producer and consumer are used on the calling thread only; the listener runs on its session's delivery thread.
 *
 * <pre>
 *   java -jar samples/kafka-interop/target/millrace-sample-kafka-interop.jar [brokers]   (default: localhost:9092)
 * </pre>
 */
public final class KafkaInteropSample {

    static final String ORDERS = "kafka-orders";
    static final String EVENTS = "kafka-order-events";
    /** The record header that makes a JMS consumer see a TextMessage (see JmsRecordCodec). */
    static final String BODY_TYPE_HEADER = "jms.body.type";
    static final String CORRELATION_ID_HEADER = "jms.correlation.id";

    private KafkaInteropSample() {
    }

    public static void main(String[] args) throws Exception {
        String brokers = args.length > 0 ? args[0] : "localhost:9092";
        List<String> events = run(brokers, 6, Duration.ofSeconds(30), System.out);
        boolean ok = events.size() == 6;
        System.out.println("Kafka interop sample: " + (ok ? "OK" : "FAILED") + ", " + events.size() + " of 6 events");
        System.exit(ok ? 0 : 1);
    }

    /**
     * Produces {@code count} orders with a KafkaProducer, processes them with a JMS listener and returns the events
     * a KafkaConsumer read back, as {@code "<jms.correlation.id header>: <value>"}, within {@code timeout}.
     */
    static List<String> run(String brokers, int count, Duration timeout, PrintStream out) throws Exception {
        createTopics(brokers);
        try (KafkaConsumer<String, String> eventReader = eventReader(brokers)) {
            String run = Long.toString(System.currentTimeMillis(), 36);
            produceOrders(brokers, run, count, out);
            try (OrderProcessor processor = new OrderProcessor(new MillraceConnectionFactory(brokers), ORDERS,
                    EVENTS)) {
                return readEvents(eventReader, count, timeout, out);
            }
        }
    }

    private static void createTopics(String brokers) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers))) {
            for (String topic : List.of(ORDERS, EVENTS)) {
                try {
                    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
        }
    }

    /** A consumer of every partition of the events topic, positioned at its current end. */
    private static KafkaConsumer<String, String> eventReader(String brokers) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config);
        List<TopicPartition> partitions = consumer.partitionsFor(EVENTS).stream()
                .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
        consumer.assign(partitions);
        consumer.seekToEnd(partitions);
        partitions.forEach(consumer::position); // resolve the end now, before any event is published
        return consumer;
    }

    private static void produceOrders(String brokers, String run, int count, PrintStream out) throws Exception {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config)) {
            for (int i = 1; i <= count; i++) {
                String id = "order-" + run + "-" + i;
                ProducerRecord<String, String> order = new ProducerRecord<>(ORDERS, id,
                        "{\"id\":\"" + id + "\",\"item\":\"widget\",\"quantity\":" + i + "}");
                if (i % 2 == 0) {
                    order.headers().add(BODY_TYPE_HEADER, "text".getBytes(StandardCharsets.US_ASCII));
                }
                producer.send(order).get();
                out.println("KafkaProducer wrote " + id + (i % 2 == 0 ? " marked as text" : ""));
            }
        }
    }

    private static List<String> readEvents(KafkaConsumer<String, String> consumer, int count, Duration timeout,
            PrintStream out) {
        List<String> events = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (events.size() < count && System.nanoTime() < deadline) {
            for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                Header correlation = record.headers().lastHeader(CORRELATION_ID_HEADER);
                String event = (correlation == null ? "?" : new String(correlation.value(), StandardCharsets.UTF_8))
                        + ": " + record.value();
                out.println("KafkaConsumer read " + event);
                events.add(event);
            }
        }
        return events;
    }
}
