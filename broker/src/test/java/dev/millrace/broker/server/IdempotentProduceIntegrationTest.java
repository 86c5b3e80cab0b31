package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
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
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * 100,000 records from one default (idempotent) KafkaProducer through a proxy that loses a share of
 * Produce responses after the broker wrote the batch and holds back another share past the
 * client's request timeout: the producer retries those batches, and the broker must store every
 * record exactly once, in order.
 */
@Timeout(180)
class IdempotentProduceIntegrationTest {

    private static final int RECORDS = 100_000;
    private static final int PARTITIONS = 3;

    @TempDir
    Path dataDir;

    @Test
    void shouldStoreEveryRecordExactlyOnceInOrderWhileResponsesAreLost() throws Exception {
        try (ResponseDroppingProxy proxy = new ResponseDroppingProxy(42, 0.02, 0.03, 1_500)) {
            BrokerServer broker = TestBrokers.start(dataDir, Map.of("advertised.port", String.valueOf(proxy.port())));
            try {
                proxy.start(broker.boundAddress().getPort());
                String viaProxy = "127.0.0.1:" + proxy.port();
                try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                        TestBrokers.bootstrap(broker)))) {
                    admin.createTopics(List.of(new NewTopic("exactly-once", PARTITIONS, (short) 1))).all().get();
                }
                Properties p = new Properties();
                p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, viaProxy);
                p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
                p.put(ProducerConfig.BATCH_SIZE_CONFIG, "4096");
                p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "10");
                p.put(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG, "10");
                p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "1000");
                Map<Integer, List<String>> sentPerPartition = new HashMap<>();
                try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                        new StringSerializer())) {
                    List<Future<RecordMetadata>> sends = new ArrayList<>(RECORDS);
                    for (int i = 0; i < RECORDS; i++) {
                        sends.add(producer.send(new ProducerRecord<>("exactly-once", i % PARTITIONS, null, "r" + i)));
                    }
                    for (int i = 0; i < RECORDS; i++) {
                        RecordMetadata md = sends.get(i).get(120, TimeUnit.SECONDS);
                        sentPerPartition.computeIfAbsent(md.partition(), x -> new ArrayList<>()).add("r" + i);
                    }
                }
                assertThat(proxy.dropped()).as("responses the proxy dropped").isGreaterThan(0);
                assertThat(proxy.delayed()).as("responses the proxy held back past the request timeout")
                        .isGreaterThan(0);

                Properties c = new Properties();
                c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker));
                c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
                try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c, new StringDeserializer(),
                        new StringDeserializer())) {
                    List<TopicPartition> tps = new ArrayList<>();
                    for (int i = 0; i < PARTITIONS; i++) {
                        tps.add(new TopicPartition("exactly-once", i));
                    }
                    consumer.assign(tps);
                    consumer.seekToBeginning(tps);
                    Map<Integer, List<String>> stored = new HashMap<>();
                    int total = 0;
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (total < RECORDS && System.nanoTime() < deadline) {
                        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                            stored.computeIfAbsent(r.partition(), x -> new ArrayList<>()).add(r.value());
                            total++;
                        }
                    }
                    assertThat(consumer.endOffsets(tps).values().stream().mapToLong(Long::longValue).sum())
                            .as("records stored").isEqualTo(RECORDS);
                    assertThat(stored).isEqualTo(sentPerPartition);
                }
            } finally {
                broker.close();
            }
        }
    }
}
