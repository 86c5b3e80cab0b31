package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exactly-once loop Kafka Streams and JMS transacted sessions rely on: consume from an input
 * topic in a group, transform, produce to an output topic and commit the consumed offsets with
 * {@code sendOffsetsToTransaction}, then commit or abort at random (seeded). After an abort the
 * consumer rewinds to the committed offsets and processes the same input again. A read-committed
 * consumer of the output must see every input exactly once; midway the processor is replaced by a
 * new instance with the same transactional id, which must pick up from the committed offsets.
 */
@Timeout(180)
class ReadProcessWriteIntegrationTest {

    private static final String INPUT = "rpw-input";
    private static final String OUTPUT = "rpw-output";
    private static final String GROUP = "rpw-group";
    private static final int INPUTS = 3_000;
    private static final int PARTITIONS = 3;

    @TempDir
    Path dataDir;

    @Test
    void everyInputAppearsExactlyOnceInTheCommittedOutput() throws Exception {
        long seed = Long.getLong("rpw.seed", 20261130L);
        Random random = new Random(seed);
        BrokerServer broker = TestBrokers.start(dataDir, Map.of());
        try {
            String bootstrap = TestBrokers.bootstrap(broker);
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
                admin.createTopics(List.of(new NewTopic(INPUT, PARTITIONS, (short) 1),
                        new NewTopic(OUTPUT, PARTITIONS, (short) 1))).all().get();
            }
            try (KafkaProducer<String, String> input = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap), new StringSerializer(), new StringSerializer())) {
                for (int i = 0; i < INPUTS; i++) {
                    input.send(new ProducerRecord<>(INPUT, i % PARTITIONS, null, "in-" + i));
                }
            }

            int[] stats = new int[2];
            int processed = runProcessor(bootstrap, random, INPUTS / 2, stats);
            processed += runProcessor(bootstrap, random, Integer.MAX_VALUE, stats);
            assertThat(stats[1]).as("aborted transactions (seed %d)", seed).isGreaterThan(0);
            assertThat(stats[0]).as("committed transactions (seed %d)", seed).isGreaterThan(0);
            assertThat(processed).isEqualTo(INPUTS);

            Map<String, Integer> outputs = readCommittedOutput(bootstrap);
            assertThat(outputs).as("distinct outputs (seed %d)", seed).hasSize(INPUTS);
            assertThat(outputs.values()).as("copies of each output (seed %d)", seed).allMatch(n -> n == 1);
            for (int i = 0; i < INPUTS; i++) {
                assertThat(outputs).containsKey("out-" + i);
            }
        } finally {
            broker.close();
        }
    }

    /**
     * Processes in transactions of 1..50 records until {@code budget} inputs were committed or the
     * input is drained; returns how many inputs this instance committed. {@code stats} counts
     * commits [0] and aborts [1].
     */
    private int runProcessor(String bootstrap, Random random, int budget, int[] stats) {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, String.valueOf(1 + random.nextInt(50)));
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "rpw-processor");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "1");
        int committed = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c, new StringDeserializer(),
                new StringDeserializer());
             KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                     new StringSerializer())) {
            producer.initTransactions();
            consumer.subscribe(List.of(INPUT));
            int emptyPolls = 0;
            while (committed < budget && emptyPolls < 20) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(250));
                if (records.isEmpty()) {
                    emptyPolls++;
                    continue;
                }
                emptyPolls = 0;
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (ConsumerRecord<String, String> r : records) {
                    producer.send(new ProducerRecord<>(OUTPUT, r.partition(), null, r.value().replace("in-", "out-")));
                    offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                if (random.nextInt(4) == 0) {
                    producer.abortTransaction();
                    stats[1]++;
                    rewindToCommitted(consumer);
                } else {
                    producer.commitTransaction();
                    stats[0]++;
                    committed += records.count();
                }
            }
        }
        return committed;
    }

    private static void rewindToCommitted(KafkaConsumer<String, String> consumer) {
        Set<TopicPartition> assigned = consumer.assignment();
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(assigned);
        for (TopicPartition tp : assigned) {
            OffsetAndMetadata offset = committed.get(tp);
            if (offset == null) {
                consumer.seekToBeginning(List.of(tp));
            } else {
                consumer.seek(tp, offset.offset());
            }
        }
    }

    private static Map<String, Integer> readCommittedOutput(String bootstrap) {
        Map<String, Integer> counts = new HashMap<>();
        for (String value : ReadCommitted.values(bootstrap, OUTPUT, PARTITIONS)) {
            counts.merge(value, 1, Integer::sum);
        }
        return counts;
    }
}
