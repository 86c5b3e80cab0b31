package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.SupportedVersionRange;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
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
 * The member-selector extension with real kafka-clients: KafkaShareConsumers that set {@code client.rack} to
 * {@code millrace.selector:<selector>} get only the records their selector matches; the extension is advertised in
 * ApiVersions, which the stock Admin client reads without trouble.
 */
@Timeout(60)
class ShareGroupSelectorIntegrationTest {

    private static final String TOPIC = "orders";

    @TempDir
    Path dataDir;

    private BrokerServer broker;
    private String bootstrap;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of("group.share.auto.offset.reset", "earliest"));
        bootstrap = TestBrokers.bootstrap(broker);
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
        }
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    private Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    private void produce(String... colors) {
        Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < colors.length; i++) {
                ProducerRecord<String, String> record = new ProducerRecord<>(TOPIC, null, colors[i] + i);
                record.headers().add(new RecordHeader(JmsHeaders.propertyKey("color"),
                        TypedValueCodec.encodeProperty(colors[i])));
                producer.send(record);
            }
            producer.flush();
        }
    }

    private KafkaShareConsumer<String, String> consumer(String rack) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "workers");
        config.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        if (rack != null) {
            config.put(ConsumerConfig.CLIENT_RACK_CONFIG, rack);
        }
        KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(config, new StringDeserializer(),
                new StringDeserializer());
        closeables.add(consumer);
        consumer.subscribe(List.of(TOPIC));
        return consumer;
    }

    /** Polls and accepts until {@code count} records came (or the test times out). */
    private static List<String> accept(KafkaShareConsumer<String, String> consumer, int count) {
        List<String> got = new ArrayList<>();
        while (got.size() < count) {
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                got.add(r.value() + "#" + r.deliveryCount().orElseThrow());
                consumer.acknowledge(r, AcknowledgeType.ACCEPT);
            }
            consumer.commitSync();
        }
        return got;
    }

    @Test
    void shouldHandEachSelectiveMemberOnlyTheRecordsItMatchesOnFirstDelivery() {
        produce("red", "blue", "red", "blue", "green", "red");
        KafkaShareConsumer<String, String> red = consumer(MemberSelector.encode("color = 'red'"));
        KafkaShareConsumer<String, String> blue = consumer(MemberSelector.encode("color = 'blue'"));

        assertThat(accept(red, 3)).containsExactly("red0#1", "red2#1", "red5#1");
        assertThat(accept(blue, 2)).containsExactly("blue1#1", "blue3#1");

        KafkaShareConsumer<String, String> any = consumer(null);
        assertThat(accept(any, 1)).as("passed over twice, never counted as a delivery").containsExactly("green4#1");
    }

    @Test
    void shouldFailTheHeartbeatOfAnInvalidSelectorAndKeepServing() {
        produce("red");
        KafkaShareConsumer<String, String> bad = consumer("millrace.selector:color = = 'red'");

        assertThatThrownBy(() -> {
            while (true) {
                bad.poll(Duration.ofMillis(100));
            }
        }).isInstanceOf(KafkaException.class);

        assertThat(accept(consumer(MemberSelector.encode("color = 'red'")), 1)).containsExactly("red0#1");
    }

    @Test
    void shouldAdvertiseTheExtensionInApiVersionsToAStockAdminClient() throws Exception {
        try (Admin admin = admin()) {
            FeatureMetadata features = admin.describeFeatures().featureMetadata().get();
            SupportedVersionRange range = features.supportedFeatures().get(MemberSelector.FEATURE);

            assertThat(range).isNotNull();
            assertThat(range.minVersion()).isEqualTo((short) 1);
            assertThat(range.maxVersion()).isEqualTo((short) 1);
            assertThat(admin.describeCluster().nodes().get()).hasSize(1);
        }
    }
}
