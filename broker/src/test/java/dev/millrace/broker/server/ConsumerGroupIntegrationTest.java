package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;


/**
 * A consumer group of three real KafkaConsumers (cooperative-sticky) reads 100,000 records while one
 * member leaves and a new one joins. Each member commits what it processed after every poll and
 * before giving a partition up, so a partition's next owner starts exactly where the last one
 * stopped: every record is delivered once, in offset order per partition.
 */
@Timeout(240)
class ConsumerGroupIntegrationTest {

    private static final String TOPIC = "work";
    private static final int PARTITIONS = 6;
    private static final int RECORDS = 100_000;

    @TempDir
    Path dataDir;

    private BrokerServer broker;
    private String bootstrap;

    @BeforeEach
    void startBroker() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of("offsets.topic.num.partitions", "5"));
        bootstrap = TestBrokers.bootstrap(broker);
    }

    @AfterEach
    void stopBroker() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void shouldDeliverEveryRecordOnceInOrderAcrossRebalances() throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
        }
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        pp.put(ProducerConfig.ACKS_CONFIG, "1");
        pp.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(TOPIC, i % PARTITIONS, null, String.valueOf(i / PARTITIONS)));
            }
            producer.flush();
        }

        Map<Integer, List<Long>> seen = new ConcurrentHashMap<>();
        Progress total = new Progress();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            Member a = new Member("a", seen, total);
            Member b = new Member("b", seen, total);
            Member c = new Member("c", seen, total);
            List<Future<?>> running = new ArrayList<>(List.of(pool.submit(a), pool.submit(b), pool.submit(c)));
            total.awaitAtLeast(RECORDS / 3);
            c.stop();
            running.get(2).get(60, TimeUnit.SECONDS);
            total.awaitAtLeast(2 * RECORDS / 3);
            Member d = new Member("d", seen, total);
            running.add(pool.submit(d));
            assertThat(d.firstAssignment.await(60, TimeUnit.SECONDS)).as("d joined the group").isTrue();
            total.awaitAtLeast(RECORDS);
            for (Member m : List.of(a, b, d)) {
                m.stop();
            }
            for (Future<?> f : running) {
                f.get(60, TimeUnit.SECONDS);
            }
            assertThat(a.assignments.get() + b.assignments.get() + d.assignments.get()).isGreaterThanOrEqualTo(3);
        } finally {
            pool.shutdownNow();
        }

        assertThat(total.get()).isEqualTo(RECORDS);
        for (int p = 0; p < PARTITIONS; p++) {
            List<Long> offsets = seen.get(p);
            int expected = RECORDS / PARTITIONS + (p < RECORDS % PARTITIONS ? 1 : 0);
            assertThat(offsets).as("partition %d", p).hasSize(expected);
            for (int i = 0; i < offsets.size(); i++) {
                assertThat(offsets.get(i)).as("partition %d position %d", p, i).isEqualTo(i);
            }
        }
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets("g")
                    .partitionsToOffsetAndMetadata().get();
            for (int p = 0; p < PARTITIONS; p++) {
                assertThat(committed.get(new TopicPartition(TOPIC, p)).offset())
                        .isEqualTo(seen.get(p).size());
            }
            assertThat(admin.listConsumerGroups().all().get()).extracting(g -> g.groupId()).contains("g");
            var description = admin.describeConsumerGroups(List.of("g")).all().get().get("g");
            assertThat(description.groupState()).isEqualTo(org.apache.kafka.common.GroupState.EMPTY);
            assertThat(description.members()).isEmpty();
        }
    }

    /** Counts records consumed; lets the test block until a count is reached, with a deadline. */
    private static final class Progress {
        private int count;

        synchronized void add() {
            count++;
            notifyAll();
        }

        synchronized int get() {
            return count;
        }

        synchronized void awaitAtLeast(int target) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            long left;
            while (count < target && (left = deadline - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            assertThat(count).as("records consumed").isGreaterThanOrEqualTo(target);
        }
    }

    /** One group member: polls, records what it saw in order, commits after each poll and on revocation. */
    private final class Member implements Runnable {
        private final String name;
        private final Map<Integer, List<Long>> seen;
        private final Progress total;
        private final AtomicBoolean stopped = new AtomicBoolean();
        private final AtomicInteger assignments = new AtomicInteger();
        private final java.util.concurrent.CountDownLatch firstAssignment = new java.util.concurrent.CountDownLatch(1);

        Member(String name, Map<Integer, List<Long>> seen, Progress total) {
            this.name = name;
            this.seen = seen;
            this.total = total;
        }

        void stop() {
            stopped.set(true);
        }

        @Override
        public void run() {
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, "g");
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, "member-" + name);
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500");
            p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                    new StringDeserializer())) {
                Map<TopicPartition, OffsetAndMetadata> pending = new HashMap<>();
                consumer.subscribe(List.of(TOPIC), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                        commit(consumer, pending);
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        assignments.incrementAndGet();
                        firstAssignment.countDown();
                    }
                });
                while (!stopped.get()) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                        List<Long> offsets = seen.computeIfAbsent(r.partition(), x -> new ArrayList<>());
                        synchronized (offsets) {
                            offsets.add(r.offset());
                        }
                        total.add();
                        pending.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                    }
                    commit(consumer, pending);
                }
                commit(consumer, pending);
            }
        }

        private void commit(KafkaConsumer<String, String> consumer, Map<TopicPartition, OffsetAndMetadata> pending) {
            if (!pending.isEmpty()) {
                consumer.commitSync(pending);
                pending.clear();
            }
        }
    }
}
