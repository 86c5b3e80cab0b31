package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.protocol.jms.JmsHeaders;
import dev.millrace.protocol.jms.TypedValueCodec;
import dev.millrace.protocol.selector.MemberSelector;

/**
 * Fetches whose RackId carries a JMS selector, with the real KafkaConsumer: only matching records come back, offsets
 * still reach the log end (batches wholly or partly left out), compressed and transactional batches too, and an
 * invalid selector fails the fetch (INVALID_REQUEST) while the broker keeps serving.
 */
@Timeout(60)
class SelectiveFetchIntegrationTest {

    private static final TopicPartition TP = new TopicPartition("prices", 0);

    @TempDir
    Path dataDir;
    private BrokerServer broker;

    @BeforeEach
    void start() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of());
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    private void produce(Map<String, Object> extra, int from, int count, boolean transactional) throws Exception {
        Map<String, Object> config = new java.util.HashMap<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                TestBrokers.bootstrap(broker), ProducerConfig.LINGER_MS_CONFIG, 50));
        config.putAll(extra);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            if (transactional) {
                producer.initTransactions();
                producer.beginTransaction();
            }
            for (int i = from; i < from + count; i++) {
                ProducerRecord<String, String> r = new ProducerRecord<>(TP.topic(), 0, null, "v" + i);
                // every tenth record is selected; the others are not, nor is a record without the property
                if (i % 10 == 0) {
                    r.headers().add(new RecordHeader(JmsHeaders.propertyKey("kind"),
                            TypedValueCodec.encodeProperty("match")));
                } else if (i % 10 != 5) {
                    r.headers().add(new RecordHeader(JmsHeaders.propertyKey("kind"),
                            TypedValueCodec.encodeProperty("other")));
                }
                producer.send(r);
            }
            if (transactional) {
                producer.commitTransaction();
            }
        }
    }

    private KafkaConsumer<String, String> consumer(String rack, String isolation) {
        return new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker),
                ConsumerConfig.CLIENT_RACK_CONFIG, rack, ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation),
                new StringDeserializer(), new StringDeserializer());
    }

    private static List<String> readToEnd(KafkaConsumer<String, String> consumer, long end) {
        consumer.assign(List.of(TP));
        consumer.seekToBeginning(List.of(TP));
        List<String> values = new ArrayList<>();
        while (consumer.position(TP) < end) {
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                values.add(r.value());
            }
        }
        return values;
    }

    @Test
    void onlySelectedRecordsCrossTheNetworkAndOffsetsReachTheEnd() throws Exception {
        produce(Map.of(), 0, 100, false);
        produce(Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"), 100, 100, false);
        produce(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "t"), 200, 100, true); // + a commit marker at 300
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 300; i += 10) {
            expected.add("v" + i);
        }
        try (KafkaConsumer<String, String> selective = consumer(MemberSelector.encode("kind = 'match'"),
                "read_committed")) {
            assertThat(readToEnd(selective, 301)).containsExactlyElementsOf(expected);
        }
        try (KafkaConsumer<String, String> none = consumer(MemberSelector.encode("kind = 'nothing'"),
                "read_uncommitted")) {
            assertThat(readToEnd(none, 301)).isEmpty(); // only empty batches: the position still reaches the end
        }
        try (KafkaConsumer<String, String> unknown = consumer(MemberSelector.encode("kind IS NULL"),
                "read_uncommitted")) {
            assertThat(readToEnd(unknown, 301)).hasSize(30);
        }
        try (KafkaConsumer<String, String> plain = consumer("rack-1", "read_uncommitted")) {
            assertThat(readToEnd(plain, 301)).hasSize(300); // an ordinary rack id filters nothing
        }
    }

    @Test
    void anInvalidSelectorFailsTheFetchAndTheBrokerKeepsServing() throws Exception {
        produce(Map.of(), 0, 10, false);
        try (KafkaConsumer<String, String> bad = consumer(MemberSelector.encode("kind = = 'x'"), "read_uncommitted")) {
            bad.assign(List.of(TP));
            bad.seekToBeginning(List.of(TP));
            // the client reports the partition's INVALID_REQUEST (code 42) as an unexpected error
            assertThatThrownBy(() -> {
                for (int i = 0; i < 50; i++) {
                    bad.poll(Duration.ofMillis(100));
                }
            }).hasMessageContaining("error code 42");
        }
        try (KafkaConsumer<String, String> good = consumer(MemberSelector.encode("kind = 'match'"),
                "read_uncommitted")) {
            assertThat(readToEnd(good, 10)).containsExactly("v0");
        }
    }
}
