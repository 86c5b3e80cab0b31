package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.cli.XaClient;
import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.TxnShareAcknowledge;
import dev.millrace.protocol.ext.XaCodes;
import dev.millrace.protocol.ext.XaComplete;
import dev.millrace.protocol.ext.XaPrepare;
import dev.millrace.protocol.ext.XaXid;

/**
 * Queue records acknowledged in an XA branch (TxnShareAcknowledge) stay locked to the prepared branch, past the
 * record lock duration and after the consuming member has left, so no other member gets them; the branch's commit
 * accepts them, its rollback releases them for redelivery. (Within one broker's life: the holds are in the
 * share-partition leader's memory, see {@code XaBranches}.)
 */
@Timeout(60)
class XaShareIntegrationTest {

    private static final String QUEUE = "xa-queue";
    private static final String GROUP = "xa-queue-group";

    @TempDir
    Path dataDir;

    private BrokerServer broker;
    private XaClient client;
    /** The same controller port at a restart: the metadata quorum keeps its voters. */
    private Map<String, String> settings;

    @BeforeEach
    void setUp() throws Exception {
        settings = Map.of("group.share.auto.offset.reset", "earliest", "group.share.record.lock.duration.ms", "1000",
                "controller.port", String.valueOf(TestBrokers.freePort()));
        broker = TestBrokers.start(dataDir, settings);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", TestBrokers.bootstrap(broker)))) {
            admin.createTopics(List.of(new NewTopic(QUEUE, 1, (short) 1), new NewTopic("xa-topic", 2, (short) 1)))
                    .all().get();
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers",
                TestBrokers.bootstrap(broker)), new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < 2; i++) {
                producer.send(new ProducerRecord<>(QUEUE, 0, null, "m" + i)).get();
            }
        }
        client = new XaClient(TestBrokers.bootstrap(broker), Duration.ofSeconds(20));
    }

    @AfterEach
    void tearDown() {
        if (client != null) {
            client.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void shouldKeepAcknowledgedQueueRecordsLockedToThePreparedBranchAndAcceptThemAtCommit() throws Exception {
        XaXid xid = XaIntegrationTest.xid("queue-commit");
        try (RawShareMember a = new RawShareMember(broker, GROUP, "member-a");
             RawShareMember b = new RawShareMember(broker, GROUP, "member-b")) {
            consumeAndPrepare(a, "xa-share-tx-1", xid, true);
            a.leave();
            b.join(QUEUE);
            assertThat(RawShareMember.acquiredOffsets(b.fetch(1_500)))
                    .as("held for the prepared branch past the 1 s lock, after its member left").isEmpty();

            assertThat(client.complete(xid, XaComplete.Action.COMMIT, false).xaCode()).isEqualTo(XaCodes.XA_OK);
            assertThat(RawShareMember.acquiredOffsets(b.fetch(1_500))).as("accepted by the commit").isEmpty();
        }
        assertThat(ReadCommitted.values(TestBrokers.bootstrap(broker), "xa-topic", 2)).containsExactly("out");
    }

    @Test
    void shouldReleaseAcknowledgedQueueRecordsWhenThePreparedBranchRollsBack() throws Exception {
        XaXid xid = XaIntegrationTest.xid("queue-rollback");
        try (RawShareMember a = new RawShareMember(broker, GROUP, "member-a");
             RawShareMember b = new RawShareMember(broker, GROUP, "member-b")) {
            consumeAndPrepare(a, "xa-share-tx-2", xid, true);
            b.join(QUEUE);
            assertThat(RawShareMember.acquiredOffsets(b.fetch(1_500))).isEmpty();

            assertThat(client.complete(xid, XaComplete.Action.ROLLBACK, false).xaCode()).isEqualTo(XaCodes.XA_OK);
            ShareFetchResponseData redelivered = b.fetch(10_000);
            assertThat(RawShareMember.acquired(redelivered)).extracting(
                    ShareFetchResponseData.AcquiredRecords::firstOffset,
                    ShareFetchResponseData.AcquiredRecords::lastOffset,
                    ShareFetchResponseData.AcquiredRecords::deliveryCount)
                    .containsExactly(tuple(0L, 1L, (short) 2));
        }
        assertThat(ReadCommitted.values(TestBrokers.bootstrap(broker), "xa-topic", 2)).isEmpty();
    }

    @Test
    void shouldPrepareABranchThatOnlyConsumedAndAcceptItsRecordsAtCommit() throws Exception {
        XaXid xid = XaIntegrationTest.xid("queue-only");
        try (RawShareMember a = new RawShareMember(broker, GROUP, "member-a");
             RawShareMember b = new RawShareMember(broker, GROUP, "member-b")) {
            consumeAndPrepare(a, "xa-share-tx-3", xid, false);
            a.leave();
            b.join(QUEUE);
            assertThat(RawShareMember.acquiredOffsets(b.fetch(1_500))).isEmpty();
            assertThat(client.complete(xid, XaComplete.Action.COMMIT, false).xaCode()).isEqualTo(XaCodes.XA_OK);
            assertThat(RawShareMember.acquiredOffsets(b.fetch(1_500))).as("accepted by the commit").isEmpty();
        }
    }

    /**
     * The records a prepared branch consumed stay held across a restart of the broker (the hold is saved with the
     * share-partition's state): nobody gets them while the branch is in doubt, and the commit by Xid accepts them.
     */
    @Test
    void shouldKeepAPreparedBranchsRecordsHeldAcrossABrokerRestartAndAcceptThemAtCommit() throws Exception {
        XaXid xid = XaIntegrationTest.xid("queue-restart");
        try (RawShareMember a = new RawShareMember(broker, GROUP, "member-a")) {
            consumeAndPrepare(a, "xa-share-tx-4", xid, false);
        }
        restart();
        try (RawShareMember b = new RawShareMember(broker, GROUP, "member-b")) {
            b.join(QUEUE);
            assertThat(RawShareMember.acquiredOffsets(b.fetch(1_500)))
                    .as("still held for the prepared branch after the restart").isEmpty();
            assertThat(client.complete(xid, XaComplete.Action.COMMIT, false).xaCode()).isEqualTo(XaCodes.XA_OK);
            assertThat(RawShareMember.acquiredOffsets(b.fetch(1_500))).as("accepted by the commit").isEmpty();
        }
        assertThat(startOffset()).as("both records accepted, and the marker after them passed").isEqualTo(3);
    }

    /**
     * A commit by Xid that reaches the queue partition before its share-partition is loaded again (nobody fetched
     * since the restart): the loading finds the transaction's marker in the log and accepts the held records.
     */
    @Test
    void shouldAcceptAPreparedBranchsRecordsCommittedBeforeTheirShareStateWasLoadedAgain() throws Exception {
        XaXid xid = XaIntegrationTest.xid("queue-restart-commit");
        try (RawShareMember a = new RawShareMember(broker, GROUP, "member-a")) {
            consumeAndPrepare(a, "xa-share-tx-5", xid, false);
        }
        restart();
        assertThat(client.complete(xid, XaComplete.Action.COMMIT, false).xaCode()).isEqualTo(XaCodes.XA_OK);
        try (RawShareMember b = new RawShareMember(broker, GROUP, "member-b")) {
            b.join(QUEUE);
            assertThat(RawShareMember.acquiredOffsets(b.fetch(1_500))).as("accepted by the commit").isEmpty();
        }
        assertThat(startOffset()).as("both records accepted, and the marker after them passed").isEqualTo(3);
    }

    private void restart() throws Exception {
        client.close();
        broker.close();
        broker = TestBrokers.start(dataDir, settings);
        client = new XaClient(TestBrokers.bootstrap(broker), Duration.ofSeconds(20));
    }

    private long startOffset() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", TestBrokers.bootstrap(broker)))) {
            return admin.listShareGroupOffsets(Map.of(GROUP, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(GROUP).get().get(new TopicPartition(QUEUE, 0)).startOffset();
        }
    }

    /**
     * Member {@code a} acquires both queue records; a transaction of {@code transactionalId} (which sends one record
     * if {@code send}, else nothing: the acknowledgement begins it) takes the acceptance of both
     * (TxnShareAcknowledge); it is prepared as {@code xid}.
     */
    private void consumeAndPrepare(RawShareMember a, String transactionalId, XaXid xid, boolean send)
            throws Exception {
        a.join(QUEUE);
        List<Long> acquired = new ArrayList<>();
        while (acquired.size() < 2) {
            List<Long> got = RawShareMember.acquiredOffsets(a.fetch(10_000));
            assertThat(got).as("a fetch that waited 10 s acquired nothing").isNotEmpty();
            acquired.addAll(got);
        }
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", broker.boundAddress().getPort());
        try (KafkaProducer<String, String> producer = XaIntegrationTest.producer(TestBrokers.bootstrap(broker),
                transactionalId)) {
            producer.initTransactions();
            if (send) {
                producer.beginTransaction();
                producer.send(new ProducerRecord<>("xa-topic", 0, null, "out")).get();
            }
            TxnShareAcknowledge.Response held = TxnShareAcknowledge.Response.read(client.exchange(address,
                    ExtensionApi.TXN_SHARE_ACKNOWLEDGE, TxnShareAcknowledge.VERSION, new TxnShareAcknowledge.Request(
                            transactionalId, GROUP, a.memberId(), QUEUE, 0, acquired).toStruct()));
            assertThat(held.errorCode()).as(held.errorMessage()).isEqualTo(Errors.NONE.code());
            XaPrepare.Response prepared = client.prepare(address, new XaPrepare.Request(transactionalId, -1,
                    (short) -1, xid));
            assertThat(prepared.xaCode()).as(prepared.errorMessage()).isEqualTo(XaCodes.XA_OK);
        }
    }
}
