package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.share.ShareDeadLetterHeaders;

/**
 * Share groups with real KafkaShareConsumers (explicit acknowledgement) against a real broker on
 * loopback: every record goes to one member at a time and is accepted exactly once; records held
 * by a member that stops polling or closes come back to the others; rejected records and records
 * released past the delivery limit land on the dead-letter topic with their origin headers.
 */
class ShareGroupIntegrationTest {

    private static final String TOPIC = "queue";

    @TempDir
    Path dataDir;

    private BrokerServer broker;
    private String bootstrap;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    private void startBroker(Map<String, String> settings) throws Exception {
        Map<String, String> all = new HashMap<>(Map.of("group.share.auto.offset.reset", "earliest"));
        all.putAll(settings);
        broker = TestBrokers.start(dataDir, all);
        bootstrap = TestBrokers.bootstrap(broker);
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

    private void createTopic(String name, int partitions, Map<String, String> configs) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(configs))).all().get();
        }
    }

    private void produce(int count, int partitions) {
        Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.LINGER_MS_CONFIG, 5);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(TOPIC, i % partitions, null, String.valueOf(i)));
            }
            producer.flush();
        }
    }

    private KafkaShareConsumer<String, String> shareConsumer(String group) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50);
        KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(config, new StringDeserializer(),
                new StringDeserializer());
        consumer.subscribe(List.of(TOPIC));
        return consumer;
    }

    /** Accepts everything it receives until told to stop; fails on a record another member holds. */
    private static final class Member implements Runnable {
        private final KafkaShareConsumer<String, String> consumer;
        private final Map<String, String> holders;
        private final Map<String, Integer> accepted;
        private final CountDownLatch acceptances;
        private final AtomicBoolean stop = new AtomicBoolean();
        final List<Short> deliveryCounts = new ArrayList<>();
        final String name;

        Member(String name, KafkaShareConsumer<String, String> consumer, Map<String, String> holders,
               Map<String, Integer> accepted, CountDownLatch acceptances) {
            this.acceptances = acceptances;
            this.name = name;
            this.consumer = consumer;
            this.holders = holders;
            this.accepted = accepted;
        }

        @Override
        public void run() {
            while (!stop.get()) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
                List<String> mine = new ArrayList<>();
                for (ConsumerRecord<String, String> record : records) {
                    String other = holders.putIfAbsent(record.value(), name);
                    assertThat(other).as("record %s handed to %s while %s holds it", record.value(), name, other)
                            .isNull();
                    mine.add(record.value());
                    record.deliveryCount().ifPresent(deliveryCounts::add);
                    consumer.acknowledge(record, AcknowledgeType.ACCEPT);
                }
                if (mine.isEmpty()) {
                    continue;
                }
                Map<TopicIdPartition, Optional<KafkaException>> results = consumer.commitSync();
                results.values().forEach(r -> assertThat(r).isEmpty());
                for (String value : mine) {
                    accepted.merge(value, 1, Integer::sum);
                    holders.remove(value);
                    acceptances.countDown();
                }
            }
        }
    }

    private static void awaitAccepted(CountDownLatch acceptances, List<Future<?>> running) throws Exception {
        while (!acceptances.await(100, TimeUnit.MILLISECONDS)) {
            for (Future<?> f : running) {
                if (f.isDone()) {
                    f.get(); // surfaces a member's failure
                }
            }
        }
    }

    @Test
    @Timeout(60)
    void shouldHandEachRecordToOneMemberAndAcceptItOnceWhenMembersOutnumberPartitions() throws Exception {
        startBroker(Map.of());
        createTopic(TOPIC, 2, Map.of());
        int records = 3000;
        produce(records, 2);

        Map<String, String> holders = new ConcurrentHashMap<>();
        Map<String, Integer> accepted = new ConcurrentHashMap<>();
        CountDownLatch acceptances = new CountDownLatch(records);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        List<Member> members = new ArrayList<>();
        List<Future<?>> running = new ArrayList<>();
        try {
            for (String name : List.of("a", "b", "c")) {
                KafkaShareConsumer<String, String> consumer = shareConsumer("workers");
                closeables.add(consumer);
                Member member = new Member(name, consumer, holders, accepted, acceptances);
                members.add(member);
                running.add(pool.submit(member));
            }
            awaitAccepted(acceptances, running);
            members.forEach(m -> m.stop.set(true));
            for (Future<?> f : running) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(accepted).hasSize(records);
        assertThat(accepted.values()).containsOnly(1);
        assertThat(members.stream().mapToInt(m -> m.deliveryCounts.isEmpty() ? 0 : 1).sum())
                .as("members that received records").isGreaterThanOrEqualTo(2);
    }

    @Test
    @Timeout(60)
    void shouldGiveTheRecordsOfAMemberThatStopsPollingToOthersWhenItsLocksExpire() throws Exception {
        startBroker(Map.of("group.share.record.lock.duration.ms", "1000"));
        createTopic(TOPIC, 1, Map.of());
        int records = 200;
        produce(records, 1);

        KafkaShareConsumer<String, String> stalled = shareConsumer("workers");
        closeables.add(stalled);
        Set<String> stalledGot = new HashSet<>();
        while (stalledGot.isEmpty()) {
            stalled.poll(Duration.ofMillis(100)).forEach(r -> stalledGot.add(r.value()));
        }
        // the stalled member neither acknowledges nor polls again, but stays in the group

        Map<String, Integer> accepted = new ConcurrentHashMap<>();
        Map<String, Short> deliveries = new ConcurrentHashMap<>();
        KafkaShareConsumer<String, String> worker = shareConsumer("workers");
        closeables.add(worker);
        while (accepted.size() < records) {
            ConsumerRecords<String, String> polled = worker.poll(Duration.ofMillis(100));
            for (ConsumerRecord<String, String> record : polled) {
                deliveries.put(record.value(), record.deliveryCount().orElseThrow());
                worker.acknowledge(record, AcknowledgeType.ACCEPT);
            }
            if (!polled.isEmpty()) {
                worker.commitSync().values().forEach(r -> assertThat(r).isEmpty());
                polled.forEach(r -> accepted.merge(r.value(), 1, Integer::sum));
            }
        }

        assertThat(accepted.values()).containsOnly(1);
        for (String value : stalledGot) {
            assertThat(deliveries.get(value)).as("delivery count of %s", value).isGreaterThanOrEqualTo((short) 2);
        }
    }

    @Test
    @Timeout(30)
    void shouldReleaseWhatAMemberHoldsWhenItClosesWithoutAcknowledging() throws Exception {
        startBroker(Map.of()); // 30 s locks: only the release on close can hand the records over in time
        createTopic(TOPIC, 1, Map.of());
        int records = 100;
        produce(records, 1);

        Set<String> firstGot = new HashSet<>();
        try (KafkaShareConsumer<String, String> first = shareConsumer("workers")) {
            while (firstGot.isEmpty()) {
                first.poll(Duration.ofMillis(100)).forEach(r -> firstGot.add(r.value()));
            }
        }

        Map<String, Short> deliveries = new ConcurrentHashMap<>();
        KafkaShareConsumer<String, String> second = shareConsumer("workers");
        closeables.add(second);
        while (deliveries.size() < records) {
            ConsumerRecords<String, String> polled = second.poll(Duration.ofMillis(100));
            for (ConsumerRecord<String, String> record : polled) {
                assertThat(deliveries.put(record.value(), record.deliveryCount().orElseThrow())).isNull();
                second.acknowledge(record, AcknowledgeType.ACCEPT);
            }
            if (!polled.isEmpty()) {
                second.commitSync().values().forEach(r -> assertThat(r).isEmpty());
            }
        }

        for (String value : firstGot) {
            assertThat(deliveries.get(value)).as("delivery count of %s", value).isEqualTo((short) 2);
        }
    }

    @Test
    @Timeout(60)
    void shouldDeadLetterRejectedRecordsAndRecordsReleasedPastTheDeliveryLimit() throws Exception {
        startBroker(Map.of("group.share.delivery.count.limit", "2"));
        createTopic("queue-dlq", 1, Map.of());
        createTopic(TOPIC, 1, Map.of("millrace.share.dlq.topic", "queue-dlq"));
        int records = 20;
        produce(records, 1);

        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        Future<?> refuser = pool.submit(() -> {
            try (KafkaShareConsumer<String, String> consumer = shareConsumer("refusers")) {
                while (!stop.get()) {
                    ConsumerRecords<String, String> polled = consumer.poll(Duration.ofMillis(100));
                    for (ConsumerRecord<String, String> record : polled) {
                        boolean even = Integer.parseInt(record.value()) % 2 == 0;
                        consumer.acknowledge(record, even ? AcknowledgeType.REJECT : AcknowledgeType.RELEASE);
                    }
                    if (!polled.isEmpty()) {
                        consumer.commitSync();
                    }
                }
            }
            return null;
        });

        Map<String, ConsumerRecord<String, String>> deadLetters = new HashMap<>();
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, String> dlq = new KafkaConsumer<>(config, new StringDeserializer(),
                new StringDeserializer())) {
            dlq.assign(List.of(new TopicPartition("queue-dlq", 0)));
            while (deadLetters.size() < records) {
                if (refuser.isDone()) {
                    refuser.get();
                }
                dlq.poll(Duration.ofMillis(100)).forEach(r -> assertThat(deadLetters.put(r.value(), r)).isNull());
            }
        } finally {
            stop.set(true);
            pool.shutdown();
        }
        refuser.get(30, TimeUnit.SECONDS);

        for (int i = 0; i < records; i++) {
            ConsumerRecord<String, String> copy = deadLetters.get(String.valueOf(i));
            assertThat(header(copy, ShareDeadLetterHeaders.ORIGINAL_TOPIC)).isEqualTo(TOPIC);
            assertThat(header(copy, ShareDeadLetterHeaders.ORIGINAL_PARTITION)).isEqualTo("0");
            assertThat(header(copy, ShareDeadLetterHeaders.ORIGINAL_OFFSET)).isEqualTo(String.valueOf(i));
            assertThat(header(copy, ShareDeadLetterHeaders.GROUP)).isEqualTo("refusers");
            if (i % 2 == 0) {
                assertThat(header(copy, ShareDeadLetterHeaders.REASON)).isEqualTo("rejected");
                assertThat(header(copy, ShareDeadLetterHeaders.DELIVERY_COUNT)).isEqualTo("1");
            } else {
                assertThat(header(copy, ShareDeadLetterHeaders.REASON)).isEqualTo("delivery-count-limit");
                assertThat(header(copy, ShareDeadLetterHeaders.DELIVERY_COUNT)).isEqualTo("2");
            }
        }
    }

    @Test
    @Timeout(60)
    void shouldNeitherRedeliverAcceptedRecordsNorLoseOthersAcrossARestart() throws Exception {
        Map<String, String> settings = Map.of("controller.port", String.valueOf(TestBrokers.freePort()));
        startBroker(settings);
        createTopic(TOPIC, 1, Map.of());
        int records = 100;
        produce(records, 1);

        Set<String> acceptedBefore = new HashSet<>();
        KafkaShareConsumer<String, String> before = shareConsumer("workers");
        while (acceptedBefore.isEmpty()) {
            ConsumerRecords<String, String> polled = before.poll(Duration.ofMillis(100));
            for (ConsumerRecord<String, String> record : polled) {
                if (Integer.parseInt(record.value()) % 2 == 0) { // odd ones stay acquired, unacknowledged
                    before.acknowledge(record, AcknowledgeType.ACCEPT);
                    acceptedBefore.add(record.value());
                }
            }
            if (!polled.isEmpty()) {
                before.commitSync().values().forEach(r -> assertThat(r).isEmpty());
            }
        }
        broker.close();
        before.close(Duration.ZERO);
        startBroker(settings);

        Set<String> acceptedAfter = new HashSet<>();
        KafkaShareConsumer<String, String> after = shareConsumer("workers");
        closeables.add(after);
        while (acceptedBefore.size() + acceptedAfter.size() < records) {
            ConsumerRecords<String, String> polled = after.poll(Duration.ofMillis(100));
            for (ConsumerRecord<String, String> record : polled) {
                assertThat(acceptedBefore).as("accepted before the restart").doesNotContain(record.value());
                assertThat(acceptedAfter.add(record.value())).as("%s accepted twice", record.value()).isTrue();
                after.acknowledge(record, AcknowledgeType.ACCEPT);
            }
            if (!polled.isEmpty()) {
                after.commitSync().values().forEach(r -> assertThat(r).isEmpty());
            }
        }
        assertThat(acceptedAfter).hasSize(records - acceptedBefore.size());
    }

    private static String header(ConsumerRecord<String, String> record, String key) {
        Header header = record.headers().lastHeader(key);
        assertThat(header).as("header %s", key).isNotNull();
        return new String(header.value(), StandardCharsets.UTF_8);
    }
}
