package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactions with the real kafka-clients against one broker: commits become visible to
 * read-committed consumers, aborts and open transactions never do, a zombie is fenced, and the
 * admin client can describe what is going on and abort an open transaction on a partition (WriteTxnMarkers).
 */
@Timeout(120)
class TransactionIntegrationTest {

    private static final String TOPIC = "txn-topic";

    @TempDir
    Path dataDir;

    private BrokerServer broker;

    @BeforeEach
    void start() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of("transaction.abort.timed.out.transaction.cleanup.interval.ms", "100"));
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1))).all().get();
        }
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    @Test
    void readCommittedSeesCommittedRecordsOnlyAndReadUncommittedSeesAll() throws Exception {
        try (KafkaProducer<String, String> producer = transactionalProducer("tx-visibility")) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "committed-1"));
            producer.send(new ProducerRecord<>(TOPIC, 1, null, "committed-2"));
            producer.commitTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "aborted-1"));
            producer.send(new ProducerRecord<>(TOPIC, 1, null, "aborted-2"));
            producer.flush();
            producer.abortTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "committed-3"));
            producer.commitTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 1, null, "open-1"));
            producer.flush();

            assertThat(readAll("read_committed", 3)).containsExactlyInAnyOrder("committed-1", "committed-2",
                    "committed-3");
            assertThat(readAll("read_uncommitted", 6)).containsExactlyInAnyOrder("committed-1", "committed-2",
                    "aborted-1", "aborted-2", "committed-3", "open-1");

            Partition p1 = broker.partitionManager().partition(new TopicPartition(TOPIC, 1)).orElseThrow();
            assertThat(p1.lastStableOffset()).as("the open transaction holds back the LSO of partition 1")
                    .isLessThan(p1.highWatermark());
            producer.commitTransaction();
            assertThat(p1.lastStableOffset()).isEqualTo(p1.highWatermark());
        }
        assertThat(readAll("read_committed", 4)).containsExactlyInAnyOrder("committed-1", "committed-2",
                "committed-3", "open-1");
    }

    @Test
    void aNewProducerWithTheSameTransactionalIdFencesTheOldOneAndAbortsItsOpenTransaction() throws Exception {
        KafkaProducer<String, String> zombie = transactionalProducer("tx-fence");
        try {
            zombie.initTransactions();
            zombie.beginTransaction();
            zombie.send(new ProducerRecord<>(TOPIC, 0, null, "zombie-open")).get();

            try (KafkaProducer<String, String> successor = transactionalProducer("tx-fence")) {
                successor.initTransactions();
                successor.beginTransaction();
                successor.send(new ProducerRecord<>(TOPIC, 0, null, "successor"));
                successor.commitTransaction();

                Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(() -> {
                    zombie.send(new ProducerRecord<>(TOPIC, 0, null, "zombie-late")).get();
                    zombie.commitTransaction();
                });
                assertThat(thrown).as("the zombie's late write fails").isNotNull();
                List<Throwable> chain = new ArrayList<>();
                for (Throwable t = thrown; t != null; t = t.getCause()) {
                    chain.add(t);
                }
                assertThat(chain).as("causes of " + thrown).anyMatch(ProducerFencedException.class::isInstance);
            }
        } finally {
            zombie.close(Duration.ZERO);
        }
        assertThat(readAll("read_committed", 1)).containsExactly("successor");
    }

    @Test
    void transactionalBatchForAPartitionNotAddedIsRefusedAndNothingIsWritten() throws Exception {
        // A raw transactional batch that skips AddPartitionsToTxn: built with the client's own classes.
        try (KafkaProducer<String, String> producer = transactionalProducer("tx-raw")) {
            producer.initTransactions();
        }
        var sender = new RawProduce(TestBrokers.bootstrap(broker));
        assertThatThrownBy(() -> sender.sendTransactional(TOPIC, 0, "tx-raw"))
                .isInstanceOf(InvalidTxnStateException.class)
                .hasMessageContaining("not in that producer's open transaction");
        Partition p0 = broker.partitionManager().partition(new TopicPartition(TOPIC, 0)).orElseThrow();
        assertThat(p0.highWatermark()).isZero();
        assertThat(p0.lastStableOffset()).isZero();
    }

    @Test
    void aMarkerSentByAClientIsRefusedAsAnInvalidRecordAndNothingIsWritten() throws Exception {
        long producerId;
        try (KafkaProducer<String, String> producer = transactionalProducer("tx-marker")) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "open")).get();
            try (Admin admin = admin()) {
                producerId = admin.describeTransactions(List.of("tx-marker")).description("tx-marker").get()
                        .producerId();
            }
            var sender = new RawProduce(TestBrokers.bootstrap(broker));
            assertThatThrownBy(() -> sender.sendMarker(TOPIC, 0, "tx-marker", producerId, (short) 0))
                    .isInstanceOf(InvalidRecordException.class)
                    .hasMessageContaining("only transaction coordinators write markers");
            Partition p0 = broker.partitionManager().partition(new TopicPartition(TOPIC, 0)).orElseThrow();
            assertThat(p0.lastStableOffset()).as("the transaction is still open").isZero();
            producer.commitTransaction();
        }
        assertThat(readAll("read_committed", 1)).contains("open");
    }

    @Test
    void adminDescribesAndListsTransactionsAndProducers() throws Exception {
        try (KafkaProducer<String, String> producer = transactionalProducer("tx-admin");
             Admin admin = admin()) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 1, null, "open")).get();

            TransactionDescription description = admin.describeTransactions(List.of("tx-admin"))
                    .description("tx-admin").get();
            assertThat(description.state()).isEqualTo(org.apache.kafka.clients.admin.TransactionState.ONGOING);
            assertThat(description.topicPartitions()).containsExactly(new TopicPartition(TOPIC, 1));
            assertThat(description.transactionStartTimeMs()).isNotEmpty();

            Collection<TransactionListing> listings = admin.listTransactions().all().get();
            assertThat(listings).anySatisfy(l -> {
                assertThat(l.transactionalId()).isEqualTo("tx-admin");
                assertThat(l.producerId()).isEqualTo(description.producerId());
            });

            List<ProducerState> producers = admin.describeProducers(List.of(new TopicPartition(TOPIC, 1)))
                    .partitionResult(new TopicPartition(TOPIC, 1)).get().activeProducers();
            assertThat(producers).singleElement().satisfies(s -> {
                assertThat(s.producerId()).isEqualTo(description.producerId());
                assertThat(s.currentTransactionStartOffset()).hasValue(0L);
            });
            producer.commitTransaction();
            assertThat(admin.describeTransactions(List.of("tx-admin")).description("tx-admin").get().state())
                    .isEqualTo(org.apache.kafka.clients.admin.TransactionState.COMPLETE_COMMIT);
        }
    }

    @Test
    void theCoordinatorAbortsATransactionOpenLongerThanItsTimeoutAndFencesItsProducer() throws Exception {
        Properties p = producerProps("tx-timeout");
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "300");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                new StringSerializer())) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "too-slow")).get();
            Partition p0 = broker.partitionManager().partition(new TopicPartition(TOPIC, 0)).orElseThrow();
            assertThat(p0.lastStableOffset()).isZero();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (p0.lastStableOffset() < p0.highWatermark() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(p0.lastStableOffset()).as("the abort marker closed the transaction")
                    .isEqualTo(p0.highWatermark()).isEqualTo(2);
            Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(producer::commitTransaction);
            List<Throwable> chain = new ArrayList<>();
            for (Throwable t = thrown; t != null; t = t.getCause()) {
                chain.add(t);
            }
            assertThat(chain).as("causes of " + thrown).anyMatch(ProducerFencedException.class::isInstance);
        }
        assertThat(readAll("read_committed", 0)).isEmpty();
        assertThat(readAll("read_uncommitted", 1)).containsExactly("too-slow");
    }

    @Test
    void aTimeoutLongerThanTheBrokerMaximumIsRefusedAtInit() {
        Properties p = producerProps("tx-too-long");
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "1000000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                new StringSerializer())) {
            assertThatThrownBy(producer::initTransactions)
                    .hasMessageContaining("transaction.max.timeout.ms");
        }
    }

    @Test
    void anAdminAbortTransactionClosesAnOpenTransactionOnItsPartitionWithWriteTxnMarkers() throws Exception {
        TopicPartition tp = new TopicPartition(TOPIC, 0);
        Partition partition = broker.partitionManager().partition(tp).orElseThrow();
        try (KafkaProducer<String, String> producer = transactionalProducer("tx-hanging"); Admin admin = admin()) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "hanging")).get();
            assertThat(partition.lastStableOffset()).isLessThan(partition.highWatermark());
            ProducerState open = admin.describeProducers(List.of(tp)).partitionResult(tp).get(30, TimeUnit.SECONDS)
                    .activeProducers().get(0);

            admin.abortTransaction(new AbortTransactionSpec(tp, open.producerId(), (short) open.producerEpoch(),
                    open.coordinatorEpoch().orElse(0))).all().get(30, TimeUnit.SECONDS);

            assertThat(partition.lastStableOffset()).as("the abort marker closed the transaction on " + tp)
                    .isEqualTo(partition.highWatermark());
            assertThat(broker.apis().requestCount(ApiKeys.WRITE_TXN_MARKERS)).isEqualTo(1);
        }
    }

    private List<String> readAll(String isolation, int expected) {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker));
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c, new StringDeserializer(),
                new StringDeserializer())) {
            List<TopicPartition> partitions = List.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
                boolean atEnd = partitions.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
                if (atEnd && values.size() >= expected) {
                    break;
                }
            }
        }
        return values;
    }

    private KafkaProducer<String, String> transactionalProducer(String transactionalId) {
        return new KafkaProducer<>(producerProps(transactionalId), new StringSerializer(), new StringSerializer());
    }

    private Properties producerProps(String transactionalId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker));
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
        return p;
    }

    private Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker)));
    }
}
