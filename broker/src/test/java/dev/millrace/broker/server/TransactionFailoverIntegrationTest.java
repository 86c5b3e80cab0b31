package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.group.OffsetsTopic;
import dev.millrace.broker.txn.TransactionStateTopic;

/**
 * Transactions in a three-broker cluster with the real kafka-clients: a topic whose partitions (replication factor 3)
 * are led by different brokers, so that the coordinator writes most markers with WriteTxnMarkers to other brokers;
 * commits and aborts (with {@code sendOffsetsToTransaction}) seen correctly by read-committed consumers; and the
 * broker that coordinates the transactional id stopped mid-stream: every acknowledged commit is visible on every
 * partition afterwards, nothing of an aborted or interrupted transaction is, and the old producer is fenced once a new
 * one initialises with its transactional id on the new coordinator; when the broker is back, a preferred election
 * (Admin {@code electLeaders}) hands the coordinator back to it without stopping anything, and the producer carries
 * on.
 *
 * <p>The transactional ids are chosen so that their coordinator is not the leader of {@code __consumer_offsets} (the
 * group coordinator's failover is tested on its own).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class TransactionFailoverIntegrationTest {

    private static final String TOPIC = "orders";
    private static final int PARTITIONS = 3;
    private static final int TXN_PARTITIONS = 3;
    private static final String GROUP = "billing";
    private static final TopicPartition INPUT = new TopicPartition("input", 0);

    @TempDir
    Path dir;

    private InProcessCluster cluster;
    private Admin admin;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = InProcessCluster.start(dir, 3, Map.of("transaction.state.log.num.partitions",
                String.valueOf(TXN_PARTITIONS)));
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()));
        admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 3), new NewTopic(INPUT.topic(), 1,
                (short) 3))).all().get(30, TimeUnit.SECONDS);
        for (int p = 0; p < PARTITIONS; p++) {
            TopicPartition tp = new TopicPartition(TOPIC, p);
            await(() -> leaderOf(tp) >= 0 && cluster.runningIds().stream().allMatch(id -> cluster.broker(id)
                    .partitionManager().partition(tp).isPresent()), "the replicas of " + tp + " open");
        }
    }

    @AfterEach
    void stopCluster() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void shouldCommitAndAbortOnPartitionsLedByDifferentBrokersWithOffsets() throws Exception {
        Set<Integer> leaders = new HashSet<>();
        for (int p = 0; p < PARTITIONS; p++) {
            leaders.add(leaderOf(new TopicPartition(TOPIC, p)));
        }
        assertThat(leaders).as("the partitions' leaders").hasSizeGreaterThan(1);
        String transactionalId = transactionalIdNotCoordinatedBy(leaderOf(offsetsPartition()));

        try (KafkaProducer<String, String> producer = producer(transactionalId)) {
            producer.initTransactions();
            producer.beginTransaction();
            sendToEveryPartition(producer, "committed");
            producer.sendOffsetsToTransaction(Map.of(INPUT, new OffsetAndMetadata(42)),
                    new ConsumerGroupMetadata(GROUP));
            producer.commitTransaction();

            producer.beginTransaction();
            sendToEveryPartition(producer, "aborted");
            producer.sendOffsetsToTransaction(Map.of(INPUT, new OffsetAndMetadata(99)),
                    new ConsumerGroupMetadata(GROUP));
            producer.flush();
            producer.abortTransaction();
        }

        assertThat(ReadCommitted.values(cluster.bootstrap(), TOPIC, PARTITIONS))
                .containsExactlyInAnyOrder("committed-0", "committed-1", "committed-2");
        assertThat(committedOffset()).isEqualTo(42);
        assertThat(cluster.runningIds().stream().mapToLong(id -> cluster.broker(id).apis()
                .requestCount(ApiKeys.WRITE_TXN_MARKERS)).sum()).as("markers sent to other brokers").isPositive();
    }

    /**
     * The hanging transaction of a chaos run: a Produce held up in a failover reached a delay partition after the
     * abort marker of its transaction (the client had given up on it) and opened a transaction there that no
     * coordinator knew of; the partition's last stable offset stayed behind it for the rest of the run. Here the late
     * batch is sent by hand, with the producer's id, epoch and next sequence, to a leader that does not coordinate the
     * transactional id (the case that was not verified before).
     */
    @Test
    void shouldRefuseABatchThatArrivesAfterItsTransactionWasAbortedOnALeaderThatDoesNotCoordinateIt()
            throws Exception {
        TopicPartition tp = new TopicPartition(TOPIC, 0);
        int leader = leaderOf(tp);
        String transactionalId = transactionalIdNotCoordinatedBy(leader);
        try (KafkaProducer<String, String> producer = producer(transactionalId)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, "k", "aborted")).get(30, TimeUnit.SECONDS);
            producer.abortTransaction();
            ProducerState state = admin.describeProducers(List.of(tp)).partitionResult(tp).get(30, TimeUnit.SECONDS)
                    .activeProducers().get(0);

            assertThatThrownBy(() -> new RawProduce(cluster.address(leader)).sendTransactional(TOPIC, 0,
                    transactionalId, state.producerId(), (short) state.producerEpoch(), state.lastSequence() + 1))
                    .isInstanceOf(InvalidTxnStateException.class)
                    .hasMessageContaining("not in that producer's open transaction");
            assertThat(lastStableOffset(tp)).as("nothing holds back read-committed consumers")
                    .isEqualTo(logEndOffset(tp));

            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, "k", "committed")).get(30, TimeUnit.SECONDS);
            producer.commitTransaction();
        }
        assertThat(ReadCommitted.values(cluster.bootstrap(), TOPIC, PARTITIONS)).containsExactly("committed");
        assertThat(lastStableOffset(tp)).isEqualTo(logEndOffset(tp));
    }

    /**
     * The same for offsets: a TxnOffsetCommit that reaches the group's coordinator after its transaction was aborted
     * (sent by hand here, to a coordinator that does not coordinate the transactional id) is refused, so that the
     * group's partition keeps no transaction open and read-committed offset fetches (requireStable) still answer.
     */
    @Test
    void shouldRefuseATransactionalOffsetCommitThatArrivesAfterItsTransactionWasAborted() throws Exception {
        int groupCoordinator = leaderOf(offsetsPartition());
        String transactionalId = transactionalIdNotCoordinatedBy(groupCoordinator);
        try (KafkaProducer<String, String> producer = producer(transactionalId)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.sendOffsetsToTransaction(Map.of(INPUT, new OffsetAndMetadata(7)), new ConsumerGroupMetadata(GROUP));
            producer.abortTransaction();
            TransactionDescription txn = admin.describeTransactions(List.of(transactionalId)).description(
                    transactionalId).get(30, TimeUnit.SECONDS);

            TxnOffsetCommitRequestData late = new TxnOffsetCommitRequestData().setTransactionalId(transactionalId)
                    .setGroupId(GROUP).setProducerId(txn.producerId()).setProducerEpoch((short) txn.producerEpoch())
                    .setGenerationIdOrMemberEpoch(-1).setMemberId("");
            late.topics().add(new TxnOffsetCommitRequestTopic().setName(INPUT.topic()).setPartitions(List.of(
                    new TxnOffsetCommitRequestPartition().setPartitionIndex(INPUT.partition()).setCommittedOffset(99))));
            TxnOffsetCommitRequest request = new TxnOffsetCommitRequest(late, (short) 3);
            String[] address = cluster.address(groupCoordinator).split(":");
            try (RawConnection connection = RawConnection.open(new InetSocketAddress(address[0],
                    Integer.parseInt(address[1])), 30_000)) {
                connection.sendRequest(request, 7);
                TxnOffsetCommitResponse response = (TxnOffsetCommitResponse) connection.readResponse(
                        RawConnection.header(request, 7));
                assertThat(response.errorCounts()).containsOnlyKeys(Errors.INVALID_TXN_STATE);
            }
            OffsetAndMetadata stable = admin.listConsumerGroupOffsets(GROUP, new ListConsumerGroupOffsetsOptions()
                    .requireStable(true)).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS).get(INPUT);
            assertThat(stable).as("no offset of the aborted transactions, and no transaction left open").isNull();

            producer.beginTransaction();
            producer.sendOffsetsToTransaction(Map.of(INPUT, new OffsetAndMetadata(42)),
                    new ConsumerGroupMetadata(GROUP));
            producer.commitTransaction();
        }
        assertThat(committedOffset()).isEqualTo(42);
    }

    private long lastStableOffset(TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(
                IsolationLevel.READ_COMMITTED)).partitionResult(tp).get(30, TimeUnit.SECONDS).offset();
    }

    private long logEndOffset(TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(30, TimeUnit.SECONDS)
                .offset();
    }

    @Test
    void shouldKeepAcknowledgedCommitsAndFenceTheZombieWhenTheCoordinatorsBrokerStops() throws Exception {
        String transactionalId = transactionalIdNotCoordinatedBy(leaderOf(offsetsPartition()));
        TopicPartition coordinatorPartition = new TopicPartition(TransactionStateTopic.NAME,
                Utils.abs(transactionalId.hashCode()) % TXN_PARTITIONS);
        int coordinator = leaderOf(coordinatorPartition);
        assertThat(replicasOf(coordinatorPartition).get(0)).as("the coordinator is the preferred replica")
                .isEqualTo(coordinator);

        KafkaProducer<String, String> zombie = producer(transactionalId);
        try {
            zombie.initTransactions();
            zombie.beginTransaction();
            sendToEveryPartition(zombie, "a");
            zombie.sendOffsetsToTransaction(Map.of(INPUT, new OffsetAndMetadata(5)), new ConsumerGroupMetadata(GROUP));
            zombie.commitTransaction();
            zombie.beginTransaction();
            sendToEveryPartition(zombie, "b");
            zombie.abortTransaction();
            zombie.beginTransaction();
            sendToEveryPartition(zombie, "c"); // interrupted: never committed
            zombie.flush();

            cluster.stop(coordinator);
            await(() -> leaderOf(coordinatorPartition) >= 0 && leaderOf(coordinatorPartition) != coordinator,
                    "a new leader of " + coordinatorPartition);

            try (KafkaProducer<String, String> successor = producer(transactionalId)) {
                successor.initTransactions(); // on the new coordinator: bumps the epoch, aborts "c"
                assertThatThrownBy(zombie::commitTransaction).as("the old producer is fenced")
                        .isInstanceOf(ProducerFencedException.class);
                successor.beginTransaction();
                sendToEveryPartition(successor, "d");
                successor.sendOffsetsToTransaction(Map.of(INPUT, new OffsetAndMetadata(7)),
                        new ConsumerGroupMetadata(GROUP));
                successor.commitTransaction();

                // the broker comes back and a preferred election hands the coordinator back to it: it loads the
                // partition again (the state its successor wrote) and the producer carries on
                cluster.start(coordinator);
                await(() -> isrOf(coordinatorPartition).contains(coordinator), "broker " + coordinator
                        + " back in the ISR of " + coordinatorPartition);
                assertThat(admin.electLeaders(ElectionType.PREFERRED, Set.of(coordinatorPartition)).partitions()
                        .get(30, TimeUnit.SECONDS).get(coordinatorPartition)).isEmpty();
                await(() -> leaderOf(coordinatorPartition) == coordinator, "broker " + coordinator + " leading "
                        + coordinatorPartition + " again");
                successor.beginTransaction();
                sendToEveryPartition(successor, "e");
                successor.commitTransaction();
            }
        } finally {
            zombie.close(Duration.ofSeconds(5));
        }

        assertThat(ReadCommitted.values(cluster.bootstrap(), TOPIC, PARTITIONS))
                .containsExactlyInAnyOrder("a-0", "a-1", "a-2", "d-0", "d-1", "d-2", "e-0", "e-1", "e-2");
        assertThat(committedOffset()).isEqualTo(7);
    }

    @Test
    void shouldApplyEveryTransactionWhollyOrNotAtAllWhenTheCoordinatorStopsDuringCommits() throws Exception {
        String transactionalId = transactionalIdNotCoordinatedBy(leaderOf(offsetsPartition()));
        TopicPartition coordinatorPartition = new TopicPartition(TransactionStateTopic.NAME,
                Utils.abs(transactionalId.hashCode()) % TXN_PARTITIONS);
        int coordinator = leaderOf(coordinatorPartition);
        List<Integer> acknowledged = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicInteger attempted = new AtomicInteger();
        int afterStop = 5;
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            KafkaProducer<String, String> producer = producer(transactionalId);
            producer.initTransactions();
            int acknowledgedAfterStop = 0;
            while (acknowledgedAfterStop < afterStop) {
                int n = attempted.getAndIncrement();
                try {
                    producer.beginTransaction();
                    sendToEveryPartition(producer, "t" + n);
                    producer.commitTransaction();
                    acknowledged.add(n);
                    if (stopped.isDone()) {
                        acknowledgedAfterStop++;
                    }
                } catch (KafkaException e) {
                    // outcome unknown: a new producer with the id aborts it if it is still open
                    producer.close(Duration.ofSeconds(5));
                    producer = producer(transactionalId);
                    producer.initTransactions();
                }
            }
            producer.close(Duration.ofSeconds(5));
        });
        await(() -> acknowledged.size() >= 3 || writer.isDone(), "three commits before the stop");
        cluster.stop(coordinator);
        stopped.complete(null);
        writer.get(180, TimeUnit.SECONDS);

        List<String> visible = ReadCommitted.values(cluster.bootstrap(), TOPIC, PARTITIONS);
        for (int n = 0; n < attempted.get(); n++) {
            List<String> expected = List.of("t" + n + "-0", "t" + n + "-1", "t" + n + "-2");
            long seen = expected.stream().filter(visible::contains).count();
            if (acknowledged.contains(n)) {
                assertThat(seen).as("transaction " + n + " was acknowledged").isEqualTo(3);
            } else {
                assertThat(seen).as("transaction " + n + " is all or nothing").isIn(0L, 3L);
            }
        }
        assertThat(visible).as("no record twice").doesNotHaveDuplicates();
    }

    private void sendToEveryPartition(KafkaProducer<String, String> producer, String prefix) {
        for (int p = 0; p < PARTITIONS; p++) {
            producer.send(new ProducerRecord<>(TOPIC, p, "k", prefix + "-" + p));
        }
    }

    private long committedOffset() throws Exception {
        OffsetAndMetadata offset = admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS).get(INPUT);
        return offset == null ? -1 : offset.offset();
    }

    private static TopicPartition offsetsPartition() {
        return new TopicPartition(OffsetsTopic.NAME, 0);
    }

    /** A transactional id whose {@code __transaction_state} partition has a leader other than {@code broker}. */
    private String transactionalIdNotCoordinatedBy(int broker) {
        for (int i = 0; i < 1000; i++) {
            String id = "orders-tx-" + i;
            int leader = leaderOf(new TopicPartition(TransactionStateTopic.NAME, Utils.abs(id.hashCode())
                    % TXN_PARTITIONS));
            if (leader >= 0 && leader != broker) {
                return id;
            }
        }
        throw new AssertionError("every partition of " + TransactionStateTopic.NAME + " is led by broker " + broker);
    }

    /** The leader in the metadata of a running node, or -1. */
    private int leaderOf(TopicPartition tp) {
        int any = cluster.runningIds().get(0);
        return cluster.broker(any).controller().image().topic(tp.topic())
                .map(t -> t.partitions().get(tp.partition()).leader()).orElse(-1);
    }

    private List<Integer> replicasOf(TopicPartition tp) {
        int any = cluster.runningIds().get(0);
        return cluster.broker(any).controller().image().topic(tp.topic())
                .map(t -> t.partitions().get(tp.partition()).replicas()).orElse(List.of());
    }

    private List<Integer> isrOf(TopicPartition tp) {
        int any = cluster.runningIds().get(0);
        return cluster.broker(any).controller().image().topic(tp.topic())
                .map(t -> t.partitions().get(tp.partition()).isr()).orElse(List.of());
    }

    private KafkaProducer<String, String> producer(String transactionalId) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private void await(BooleanSupplier condition, String what) throws InterruptedException {
        cluster.awaitCondition(condition, what, Duration.ofSeconds(60));
    }
}
