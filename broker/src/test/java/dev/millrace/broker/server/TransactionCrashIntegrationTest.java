package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker in its own process is killed with SIGKILL while transactional producers are busy: some
 * transactions committed, some left open on purpose, one producer committing in a loop at the
 * moment of the kill. After the restart: every transaction whose commit returned is complete, the
 * open ones are aborted by the coordinator (their timeout passes), and no transaction is
 * half-visible to a read-committed consumer: each shows all of its records or none.
 */
@Timeout(240)
class TransactionCrashIntegrationTest {

    private static final String TOPIC = "txn-crash";
    private static final int PARTITIONS = 3;
    /** Records per transaction, spread over every partition. */
    private static final int PER_TXN = 6;

    @TempDir
    Path tmp;

    @Test
    void committedTransactionsSurviveOpenOnesAbortAndNoneIsHalfVisible() throws Exception {
        Path dataDir = tmp.resolve("data");
        int port = TestBrokers.freePort();
        int controllerPort = TestBrokers.freePort();
        List<String> settings = List.of("transaction.abort.timed.out.transaction.cleanup.interval.ms=200",
                "offsets.topic.num.partitions=3", "transaction.state.log.num.partitions=3");
        Set<String> committed = ConcurrentHashMap.newKeySet();
        Set<String> leftOpen = new java.util.HashSet<>();
        try (BrokerProcess broker = BrokerProcess.start(dataDir, port, controllerPort, settings)) {
            try (Admin admin = admin(broker.bootstrap())) {
                admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
            }
            List<KafkaProducer<String, String>> open = new ArrayList<>();
            for (int p = 0; p < 3; p++) {
                KafkaProducer<String, String> producer = producer(broker.bootstrap(), "committer-" + p);
                producer.initTransactions();
                for (int t = 0; t < 5; t++) {
                    writeTransaction(producer, "committer-" + p + "-t" + t);
                    producer.commitTransaction();
                    committed.add("committer-" + p + "-t" + t);
                }
                producer.close();
            }
            for (int p = 0; p < 3; p++) {
                KafkaProducer<String, String> producer = producer(broker.bootstrap(), "opener-" + p);
                producer.initTransactions();
                writeTransaction(producer, "opener-" + p + "-t0");
                producer.commitTransaction();
                committed.add("opener-" + p + "-t0");
                writeTransaction(producer, "opener-" + p + "-t1");
                producer.flush();
                leftOpen.add("opener-" + p + "-t1");
                open.add(producer);
            }
            ExecutorService looper = Executors.newSingleThreadExecutor();
            AtomicBoolean stop = new AtomicBoolean();
            CountDownLatch someLoopCommits = new CountDownLatch(20);
            looper.submit(() -> {
                try (KafkaProducer<String, String> producer = producer(broker.bootstrap(), "looper")) {
                    producer.initTransactions();
                    for (int t = 0; !stop.get(); t++) {
                        writeTransaction(producer, "looper-t" + t);
                        producer.commitTransaction();
                        committed.add("looper-t" + t);
                        someLoopCommits.countDown();
                    }
                } catch (RuntimeException expectedWhenKilled) {
                    // the broker went away mid-transaction
                }
                return null;
            });
            assertThat(someLoopCommits.await(60, TimeUnit.SECONDS)).isTrue();
            broker.kill();
            stop.set(true);
            looper.shutdownNow();
            for (KafkaProducer<String, String> producer : open) {
                producer.close(Duration.ZERO);
            }
            assertThat(looper.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
        }

        try (BrokerProcess broker = BrokerProcess.start(dataDir, port, controllerPort, settings)) {
            awaitNoOpenTransaction(broker.bootstrap());
            Map<String, Integer> visible = readCommitted(broker.bootstrap());
            assertThat(visible.keySet()).as("committed transactions visible after the restart")
                    .containsAll(committed);
            assertThat(visible.keySet()).as("open transactions at the kill must be aborted")
                    .doesNotContainAnyElementsOf(leftOpen);
            assertThat(visible).as("no transaction is half-visible").allSatisfy((txn, count) ->
                    assertThat(count).as(txn).isEqualTo(PER_TXN));

            try (KafkaProducer<String, String> producer = producer(broker.bootstrap(), "opener-0")) {
                producer.initTransactions();
                writeTransaction(producer, "after-restart");
                producer.commitTransaction();
            }
            assertThat(readCommitted(broker.bootstrap())).containsEntry("after-restart", PER_TXN);
        }
    }

    /** Waits until the last stable offset of every partition has reached its high watermark. */
    private static void awaitNoOpenTransaction(String bootstrap) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                latest.put(new TopicPartition(TOPIC, p), OffsetSpec.latest());
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                var stable = admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all()
                        .get();
                var end = admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED)).all()
                        .get();
                boolean settled = latest.keySet().stream().allMatch(tp ->
                        stable.get(tp).offset() == end.get(tp).offset());
                if (settled) {
                    return;
                }
            }
            throw new AssertionError("Transactions left open at the kill were not aborted within 60 s");
        }
    }

    private static void writeTransaction(KafkaProducer<String, String> producer, String txn) {
        producer.beginTransaction();
        for (int k = 0; k < PER_TXN; k++) {
            producer.send(new ProducerRecord<>(TOPIC, k % PARTITIONS, null, txn + "#" + k));
        }
    }

    /** Records per transaction tag, as a read-committed consumer sees them. */
    private static Map<String, Integer> readCommitted(String bootstrap) {
        Map<String, Integer> counts = new HashMap<>();
        for (String value : ReadCommitted.values(bootstrap, TOPIC, PARTITIONS)) {
            counts.merge(value.substring(0, value.indexOf('#')), 1, Integer::sum);
        }
        return counts;
    }

    private static KafkaProducer<String, String> producer(String bootstrap, String transactionalId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "3000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "1");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }
}
