package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterClientQuotasResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaAlteration.Op;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.quota.QuotaType;

/**
 * Client quotas with real kafka-clients against an in-process broker: the Admin API round trip (defaults, deletion,
 * validation errors), and a producer and a consumer that go as fast as they can under a 100 KB/s byte-rate quota on
 * their client id: each is held to within 20% of the quota over an 8 s run, told so in its throttle-time metric,
 * and never disconnected (its connection count stays what it was once connected).
 */
@Timeout(90)
class ClientQuotaIntegrationTest {

    private static final double QUOTA = 100_000;
    private static final long RUN_MS = 8_000;
    private static final int VALUE_BYTES = 1000;

    @TempDir
    static Path tmp;

    private static BrokerServer broker;
    private static Admin admin;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBrokers.start(tmp.resolve("data"), Map.of());
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker));
        admin = Admin.create(props);
        admin.createTopics(List.of(new NewTopic("quota-produce", 1, (short) 1), new NewTopic("quota-fetch", 1,
                (short) 1))).all().get(30, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stopBroker() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void shouldAlterAndDescribeQuotasIncludingDefaultsAndDeletion() throws Exception {
        ClientQuotaEntity alice = entity("user", "alice");
        ClientQuotaEntity aliceApp = new ClientQuotaEntity(Map.of("user", "alice", "client-id", "admin-app"));
        ClientQuotaEntity defaultUser = entity("user", null);
        ClientQuotaEntity defaultClient = entity("client-id", null);
        admin.alterClientQuotas(List.of(
                new ClientQuotaAlteration(alice, List.of(new Op("producer_byte_rate", 1024.0),
                        new Op("request_percentage", 25.0))),
                new ClientQuotaAlteration(aliceApp, List.of(new Op("consumer_byte_rate", 4096.0))),
                new ClientQuotaAlteration(defaultUser, List.of(new Op("consumer_byte_rate", 2048.0))),
                new ClientQuotaAlteration(defaultClient, List.of(new Op("producer_byte_rate", 512.0)))))
                .all().get(30, TimeUnit.SECONDS);

        Map<ClientQuotaEntity, Map<String, Double>> all = describe(ClientQuotaFilter.all());
        assertThat(all).containsEntry(alice, Map.of("producer_byte_rate", 1024.0, "request_percentage", 25.0))
                .containsEntry(aliceApp, Map.of("consumer_byte_rate", 4096.0))
                .containsEntry(defaultUser, Map.of("consumer_byte_rate", 2048.0))
                .containsEntry(defaultClient, Map.of("producer_byte_rate", 512.0));
        assertThat(describe(ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntity("user",
                "alice"))))).containsOnlyKeys(alice);
        assertThat(describe(ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntity("user",
                "alice"))))).containsOnlyKeys(alice, aliceApp);
        assertThat(describe(ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofDefaultEntity(
                "user"))))).containsOnlyKeys(defaultUser);
        assertThat(describe(ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntityType(
                "client-id"))))).containsKey(aliceApp).doesNotContainKeys(alice, defaultUser, defaultClient);
        // the broker enforces what it describes
        assertThat(broker.clientQuotas().find(QuotaType.PRODUCE, "bob", "any").quota()).isEqualTo(512.0);

        // a null value removes the key; an entity left with none is gone
        admin.alterClientQuotas(List.of(
                new ClientQuotaAlteration(alice, List.of(new Op("producer_byte_rate", null))),
                new ClientQuotaAlteration(aliceApp, List.of(new Op("consumer_byte_rate", null))),
                new ClientQuotaAlteration(defaultUser, List.of(new Op("consumer_byte_rate", null))),
                new ClientQuotaAlteration(defaultClient, List.of(new Op("producer_byte_rate", null)))))
                .all().get(30, TimeUnit.SECONDS);
        all = describe(ClientQuotaFilter.all());
        assertThat(all).containsEntry(alice, Map.of("request_percentage", 25.0))
                .doesNotContainKeys(aliceApp, defaultUser, defaultClient);
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(alice, List.of(new Op("request_percentage",
                null))))).all().get(30, TimeUnit.SECONDS);
        assertThat(describe(ClientQuotaFilter.all())).doesNotContainKey(alice);
    }

    @Test
    void shouldRefuseUnknownKeysNegativeValuesAndUnknownEntityTypesPerEntityAndKeepServing() throws Exception {
        ClientQuotaEntity good = entity("client-id", "validated");
        ClientQuotaEntity unknownKey = entity("user", "u1");
        ClientQuotaEntity negative = entity("user", "u2");
        ClientQuotaEntity unknownType = entity("group", "g");
        AlterClientQuotasResult result = admin.alterClientQuotas(List.of(
                new ClientQuotaAlteration(good, List.of(new Op("producer_byte_rate", 1000.0))),
                new ClientQuotaAlteration(unknownKey, List.of(new Op("bytes_per_fortnight", 1.0))),
                new ClientQuotaAlteration(negative, List.of(new Op("consumer_byte_rate", -1.0))),
                new ClientQuotaAlteration(unknownType, List.of(new Op("producer_byte_rate", 1.0)))));
        Map<ClientQuotaEntity, org.apache.kafka.common.KafkaFuture<Void>> futures = result.values();
        futures.get(good).get(30, TimeUnit.SECONDS);
        assertThatThrownBy(() -> futures.get(unknownKey).get()).cause().isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("bytes_per_fortnight");
        assertThatThrownBy(() -> futures.get(negative).get()).cause().isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("consumer_byte_rate").hasMessageContaining("-1.0");
        assertThatThrownBy(() -> futures.get(unknownType).get()).cause().isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("group");
        assertThatThrownBy(() -> describe(ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent
                .ofEntityType("group"))))).cause().isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("group");

        Map<ClientQuotaEntity, Map<String, Double>> all = describe(ClientQuotaFilter.all());
        assertThat(all).containsEntry(good, Map.of("producer_byte_rate", 1000.0))
                .doesNotContainKeys(unknownKey, negative, unknownType);
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(good, List.of(new Op("producer_byte_rate",
                null))))).all().get(30, TimeUnit.SECONDS);
    }

    @Test
    void shouldThrottleAGreedyProducerToItsByteRateWithoutDisconnectingIt() throws Exception {
        String clientId = "greedy-producer";
        setQuota(clientId, "producer_byte_rate");
        await(() -> broker.clientQuotas().find(QuotaType.PRODUCE, "ANONYMOUS", clientId) != null,
                "the quota reaches the broker");
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker));
        props.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ProducerConfig.ACKS_CONFIG, "1");
        props.put(ProducerConfig.BUFFER_MEMORY_CONFIG, "131072");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>("quota-produce", new byte[VALUE_BYTES])).get(30, TimeUnit.SECONDS);
            double connections = metric(producer.metrics(), "producer-metrics", "connection-creation-total");
            AtomicLong ackedBytes = new AtomicLong();
            long start = System.nanoTime();
            long end = start + TimeUnit.MILLISECONDS.toNanos(RUN_MS);
            while (System.nanoTime() < end) {
                producer.send(new ProducerRecord<>("quota-produce", new byte[VALUE_BYTES]), (metadata, error) -> {
                    if (error == null && System.nanoTime() < end) {
                        ackedBytes.addAndGet(VALUE_BYTES);
                    }
                });
            }
            double rate = ackedBytes.get() * 1000.0 / RUN_MS;
            producer.flush();
            assertThat(rate).as("bytes per second acknowledged").isBetween(QUOTA * 0.8, QUOTA * 1.2);
            assertThat(metric(producer.metrics(), "producer-metrics", "produce-throttle-time-avg")).isPositive();
            assertThat(metric(producer.metrics(), "producer-metrics", "connection-creation-total"))
                    .isEqualTo(connections);
            assertThat(metric(producer.metrics(), "producer-metrics", "connection-close-total")).isZero();
        }
    }

    @Test
    void shouldThrottleAGreedyConsumerToItsByteRateWithoutDisconnectingIt() throws Exception {
        String clientId = "greedy-consumer";
        Properties producerProps = new Properties();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker));
        producerProps.put(ProducerConfig.CLIENT_ID_CONFIG, "unlimited-producer");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (int i = 0; i < 2_000; i++) {
                producer.send(new ProducerRecord<>("quota-fetch", new byte[VALUE_BYTES]));
            }
            producer.flush();
        }
        setQuota(clientId, "consumer_byte_rate");
        await(() -> broker.clientQuotas().find(QuotaType.FETCH, "ANONYMOUS", clientId) != null,
                "the quota reaches the broker");
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker));
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            TopicPartition partition = new TopicPartition("quota-fetch", 0);
            consumer.assign(List.of(partition));
            long bytes = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (bytes == 0 && System.nanoTime() < deadline) {
                bytes += valueBytes(consumer.poll(Duration.ofMillis(100)));
            }
            assertThat(bytes).as("the first records").isPositive();
            double connections = metric(consumer.metrics(), "consumer-metrics", "connection-creation-total");
            bytes = 0;
            long start = System.nanoTime();
            long end = start + TimeUnit.MILLISECONDS.toNanos(RUN_MS);
            while (System.nanoTime() < end) {
                bytes += valueBytes(consumer.poll(Duration.ofMillis(50)));
            }
            double rate = bytes * 1e9 / (System.nanoTime() - start);
            assertThat(rate).as("bytes per second consumed").isBetween(QUOTA * 0.8, QUOTA * 1.2);
            assertThat(consumer.position(partition)).as("records were left to read").isLessThan(2_000);
            assertThat(metric(consumer.metrics(), "consumer-fetch-manager-metrics", "fetch-throttle-time-avg"))
                    .isPositive();
            assertThat(metric(consumer.metrics(), "consumer-metrics", "connection-creation-total"))
                    .isEqualTo(connections);
            assertThat(metric(consumer.metrics(), "consumer-metrics", "connection-close-total")).isZero();
        }
    }

    @Test
    void shouldThrottleAClientOverItsRequestPercentageOnEveryResponse() throws Exception {
        String clientId = "busy-producer";
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity("client-id", clientId),
                List.of(new Op("request_percentage", 1.0))))).all().get(30, TimeUnit.SECONDS);
        await(() -> broker.clientQuotas().find(QuotaType.REQUEST, "ANONYMOUS", clientId) != null,
                "the quota reaches the broker");
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker));
        props.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (int i = 0; i < 5; i++) {
                producer.send(new ProducerRecord<>("quota-produce", new byte[10])).get(30, TimeUnit.SECONDS);
            }
            // 1 % of a request thread is 10 ms per second: any handler time at all is paid back in throttle time
            assertThat(metric(producer.metrics(), "producer-metrics", "produce-throttle-time-max")).isPositive();
            assertThat(metric(producer.metrics(), "producer-metrics", "connection-close-total")).isZero();
        } finally {
            admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity("client-id", clientId),
                    List.of(new Op("request_percentage", null))))).all().get(30, TimeUnit.SECONDS);
        }
    }

    private static long valueBytes(Iterable<ConsumerRecord<byte[], byte[]>> records) {
        long bytes = 0;
        for (ConsumerRecord<byte[], byte[]> record : records) {
            bytes += record.value().length;
        }
        return bytes;
    }

    private static void setQuota(String clientId, String key) throws Exception {
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity("client-id", clientId),
                List.of(new Op(key, QUOTA))))).all().get(30, TimeUnit.SECONDS);
    }

    private static Map<ClientQuotaEntity, Map<String, Double>> describe(ClientQuotaFilter filter)
            throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        return admin.describeClientQuotas(filter).entities().get(30, TimeUnit.SECONDS);
    }

    private static ClientQuotaEntity entity(String type, String name) {
        Map<String, String> parts = new HashMap<>();
        parts.put(type, name);
        return new ClientQuotaEntity(parts);
    }

    private static double metric(Map<MetricName, ? extends Metric> metrics, String group, String name) {
        List<Double> values = new ArrayList<>();
        metrics.forEach((metricName, metric) -> {
            if (metricName.group().equals(group) && metricName.name().equals(name)) {
                values.add(((Number) metric.metricValue()).doubleValue());
            }
        });
        assertThat(values).as(group + " " + name).hasSize(1);
        return values.get(0);
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waiting until " + what).isNegative();
            Thread.sleep(10);
        }
    }
}
