package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ExtensionHeader;
import dev.millrace.protocol.ext.ShareBrowse;
import dev.millrace.protocol.ext.ShareSettle;

/**
 * ShareSettle (key 30002) on the Kafka listener of a real broker, against records members acquired with raw
 * ShareGroupHeartbeat and ShareFetch requests ({@link RawShareMember}): each type applied, bad requests refused whole
 * with a message naming what was wrong, unknown partitions answered per partition, ranges reaching far past the
 * end offset answered at once; and a parked ShareFetch of a member that left the group acquires nothing.
 */
@Timeout(60)
class ShareSettleIntegrationTest {

    @TempDir
    Path dataDir;
    private BrokerServer broker;

    @BeforeEach
    void start() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of("group.share.auto.offset.reset", "earliest"));
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    @Test
    void shouldApplyEachTypeWhenTheMemberHoldsTheRecords() throws Exception {
        createTopic("settled");
        produce("settled", 5);
        try (RawShareMember a = new RawShareMember(broker, "g", "member-a");
             RawShareMember b = new RawShareMember(broker, "g", "member-b")) {
            a.join("settled");
            assertThat(acquireAll(a, 5)).containsExactly(0L, 1L, 2L, 3L, 4L);

            ShareSettle.Response settled = settle(new ShareSettle.Request("g", "member-a", List.of(
                    new ShareSettle.PartitionBatches("settled", 0, List.of(
                            new ShareSettle.Batch(0, 0, ShareSettle.ACCEPT),
                            new ShareSettle.Batch(1, 1, ShareSettle.RELEASE),
                            new ShareSettle.Batch(2, 2, ShareSettle.RENEW),
                            new ShareSettle.Batch(3, 3, ShareSettle.RETURN),
                            new ShareSettle.Batch(4, 4, ShareSettle.GAP))))));
            assertThat(settled.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(settled.partitions()).containsExactly(
                    new ShareSettle.PartitionResult("settled", 0, Errors.NONE.code()));

            // b gets the released record (delivered twice now) and the returned one (as if never delivered);
            // not the accepted one, not the renewed one a still holds, not the archived gap
            b.join("settled");
            ShareFetchResponseData got = b.fetch(10_000);
            assertThat(RawShareMember.acquired(got)).extracting(ShareFetchResponseData.AcquiredRecords::firstOffset,
                    ShareFetchResponseData.AcquiredRecords::lastOffset,
                    ShareFetchResponseData.AcquiredRecords::deliveryCount)
                    .containsExactly(tuple(1L, 1L, (short) 2),
                            tuple(3L, 3L, (short) 1));

            // a still holds 2 after RENEW; 1 is b's now
            assertThat(settleOne("g", "member-a", "settled", 2, 2, ShareSettle.ACCEPT)).isEqualTo(Errors.NONE);
            assertThat(settleOne("g", "member-a", "settled", 1, 1, ShareSettle.ACCEPT))
                    .isEqualTo(Errors.INVALID_RECORD_STATE);
            assertThat(settleOne("g", "member-b", "settled", 1, 3, ShareSettle.ACCEPT))
                    .as("2 is accepted already: skipped and reported, 1 and 3 applied")
                    .isEqualTo(Errors.INVALID_RECORD_STATE);
            ShareBrowse.Response browsed = browse("g", "settled");
            assertThat(browsed.startOffset()).as("everything is settled").isEqualTo(5);
        }
    }

    @Test
    void shouldRefuseTheWholeRequestNamingItWhenATypeIsUnknownOrARangeReversed() throws Exception {
        createTopic("settle-bad");
        produce("settle-bad", 2);
        try (RawShareMember a = new RawShareMember(broker, "g", "member-a");
             Socket socket = RawShareMember.connect(broker)) {
            a.join("settle-bad");
            assertThat(acquireAll(a, 2)).containsExactly(0L, 1L);

            ShareSettle.Response unknownType = settle(socket, new ShareSettle.Request("g", "member-a", List.of(
                    new ShareSettle.PartitionBatches("settle-bad", 0, List.of(
                            new ShareSettle.Batch(0, 0, ShareSettle.ACCEPT),
                            new ShareSettle.Batch(1, 1, (byte) 9))))));
            assertThat(Errors.forCode(unknownType.errorCode())).isEqualTo(Errors.INVALID_REQUEST);
            assertThat(unknownType.errorMessage()).contains("type 9").contains("settle-bad-0").contains("1..1");
            assertThat(unknownType.partitions()).isEmpty();

            ShareSettle.Response reversed = settle(socket, new ShareSettle.Request("g", "member-a", List.of(
                    new ShareSettle.PartitionBatches("settle-bad", 0, List.of(
                            new ShareSettle.Batch(0, 0, ShareSettle.ACCEPT))),
                    new ShareSettle.PartitionBatches("settle-bad", 0, List.of(
                            new ShareSettle.Batch(1, 0, ShareSettle.ACCEPT))))));
            assertThat(Errors.forCode(reversed.errorCode())).isEqualTo(Errors.INVALID_REQUEST);
            assertThat(reversed.errorMessage()).contains("1..0").contains("settle-bad-0");
            assertThat(reversed.partitions()).isEmpty();

            ShareSettle.Response negative = settle(socket, new ShareSettle.Request("g", "member-a", List.of(
                    new ShareSettle.PartitionBatches("settle-bad", 0, List.of(
                            new ShareSettle.Batch(-1, 0, ShareSettle.ACCEPT))))));
            assertThat(Errors.forCode(negative.errorCode())).isEqualTo(Errors.INVALID_REQUEST);
            assertThat(negative.errorMessage()).contains("-1..0").contains("settle-bad-0");

            ShareSettle.Response noMember = settle(socket, new ShareSettle.Request("g", "", List.of()));
            assertThat(Errors.forCode(noMember.errorCode())).isEqualTo(Errors.INVALID_REQUEST);
            assertThat(noMember.errorMessage()).contains("member_id");

            // nothing was applied (accepting 0 again would be INVALID_RECORD_STATE), and the same connection serves on
            ShareSettle.Response valid = settle(socket, new ShareSettle.Request("g", "member-a", List.of(
                    new ShareSettle.PartitionBatches("settle-bad", 0, List.of(
                            new ShareSettle.Batch(0, 1, ShareSettle.ACCEPT))))));
            assertThat(valid.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(valid.partitions()).containsExactly(
                    new ShareSettle.PartitionResult("settle-bad", 0, Errors.NONE.code()));
            assertThat(browse("g", "settle-bad").startOffset()).isEqualTo(2);
        }
    }

    @Test
    void shouldAnswerUnknownTopicOrPartitionForThatPartitionWhenTheGroupOrPartitionIsUnknown() throws Exception {
        createTopic("settle-known");
        produce("settle-known", 1);
        try (RawShareMember a = new RawShareMember(broker, "g", "member-a")) {
            a.join("settle-known");
            assertThat(acquireAll(a, 1)).containsExactly(0L);

            ShareSettle.Response mixed = settle(new ShareSettle.Request("g", "member-a", List.of(
                    new ShareSettle.PartitionBatches("settle-known", 5, List.of(
                            new ShareSettle.Batch(0, 0, ShareSettle.ACCEPT))),
                    new ShareSettle.PartitionBatches("no-such-topic", 0, List.of(
                            new ShareSettle.Batch(0, 0, ShareSettle.ACCEPT))),
                    new ShareSettle.PartitionBatches("settle-known", 0, List.of(
                            new ShareSettle.Batch(0, 0, ShareSettle.RENEW))))));
            assertThat(mixed.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(mixed.partitions()).containsExactly(
                    new ShareSettle.PartitionResult("settle-known", 5, Errors.UNKNOWN_TOPIC_OR_PARTITION.code()),
                    new ShareSettle.PartitionResult("no-such-topic", 0, Errors.UNKNOWN_TOPIC_OR_PARTITION.code()),
                    new ShareSettle.PartitionResult("settle-known", 0, Errors.NONE.code()));

            assertThat(settleOne("no-such-group", "member-a", "settle-known", 0, 0, ShareSettle.ACCEPT))
                    .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            assertThat(settleOne("g", "stranger", "settle-known", 0, 0, ShareSettle.ACCEPT))
                    .isEqualTo(Errors.INVALID_RECORD_STATE);
            // none of that touched a's record
            assertThat(settleOne("g", "member-a", "settle-known", 0, 0, ShareSettle.ACCEPT)).isEqualTo(Errors.NONE);
        }
    }

    /**
     * Before the fix the broker walked such a range offset by offset holding the share-partition's monitor: the request
     * never got an answer and every fetch of the partition stalled. In a thread of its own, so that this fails rather
     * than hangs.
     */
    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldAnswerAtOnceWhenARangeReachesFarBeyondTheEndOffset() throws Exception {
        createTopic("settle-wide");
        produce("settle-wide", 3);
        try (RawShareMember a = new RawShareMember(broker, "g", "member-a");
             RawShareMember b = new RawShareMember(broker, "g", "member-b")) {
            a.join("settle-wide");
            assertThat(acquireAll(a, 3)).containsExactly(0L, 1L, 2L);

            assertThat(settleOne("g", "member-a", "settle-wide", 0, Long.MAX_VALUE, ShareSettle.RETURN))
                    .isEqualTo(Errors.INVALID_RECORD_STATE);
            b.join("settle-wide");
            assertThat(acquireAll(b, 3)).as("returned: available at once").containsExactly(0L, 1L, 2L);
            assertThat(settleOne("g", "member-b", "settle-wide", 1, Long.MAX_VALUE, ShareSettle.ACCEPT))
                    .isEqualTo(Errors.INVALID_RECORD_STATE);
            assertThat(settleOne("g", "member-b", "settle-wide", 0, 0, ShareSettle.ACCEPT)).isEqualTo(Errors.NONE);
            assertThat(browse("g", "settle-wide").startOffset()).isEqualTo(3);
        }
    }

    /**
     * Before the fix a parked fetch of a member that had left acquired the next record for that member, locking it
     * to no one until the lock expired (30 s).
     */
    @Test
    void shouldAcquireNothingForAParkedFetchWhenItsMemberLeftTheGroup() throws Exception {
        createTopic("parked");
        try (RawShareMember a = new RawShareMember(broker, "pg", "member-a");
             RawShareMember b = new RawShareMember(broker, "pg", "member-b")) {
            a.join("parked");
            b.join("parked");
            long fetchesBefore = broker.apis().requestCount(ApiKeys.SHARE_FETCH);
            a.sendFetch(30_000); // nothing to acquire: it parks
            // the fetch is being handled (it parks within the same call, before the leave below can arrive; were the
            // leave first, the fetch would be refused up front and this test would not tell the fix apart)
            awaitRequestCount(ApiKeys.SHARE_FETCH, fetchesBefore + 1);

            ShareGroupHeartbeatResponseData left = a.leave();
            assertThat(left.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(left.memberEpoch()).isEqualTo(-1);
            produce("parked", 1);

            ShareFetchResponseData parked = a.awaitFetch();
            assertThat(RawShareMember.acquired(parked)).isEmpty();
            assertThat(Errors.forCode(parked.errorCode())).isEqualTo(Errors.UNKNOWN_MEMBER_ID);

            ShareFetchResponseData taken = b.fetch(10_000);
            assertThat(RawShareMember.acquired(taken)).extracting(ShareFetchResponseData.AcquiredRecords::firstOffset,
                    ShareFetchResponseData.AcquiredRecords::lastOffset,
                    ShareFetchResponseData.AcquiredRecords::deliveryCount)
                    .containsExactly(tuple(0L, 0L, (short) 1));
        }
    }

    /**
     * A consumer that closes the connection of its parked fetch (as the JMS client does first when it closes) leaves
     * nothing acquired for that fetch, even while it is still a member: the next member gets the records at once,
     * not after the acquisition lock (30 s) expires.
     */
    @Test
    void shouldAcquireNothingForAParkedFetchWhoseConnectionClosed() throws Exception {
        createTopic("closed-fetch");
        try (RawShareMember a = new RawShareMember(broker, "cg", "member-a");
             RawShareMember b = new RawShareMember(broker, "cg", "member-b")) {
            a.join("closed-fetch");
            b.join("closed-fetch");
            long fetchesBefore = broker.apis().requestCount(ApiKeys.SHARE_FETCH);
            a.sendFetch(30_000); // nothing to acquire: it parks
            awaitRequestCount(ApiKeys.SHARE_FETCH, fetchesBefore + 1);
            long abandonedBefore = broker.apis().abandonedShareFetches();
            a.closeFetches();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (broker.apis().abandonedShareFetches() == abandonedBefore && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(broker.apis().abandonedShareFetches()).as("the parked fetch abandoned")
                    .isEqualTo(abandonedBefore + 1);
            produce("closed-fetch", 1);

            ShareFetchResponseData taken = b.fetch(10_000);
            assertThat(RawShareMember.acquired(taken)).extracting(ShareFetchResponseData.AcquiredRecords::firstOffset,
                    ShareFetchResponseData.AcquiredRecords::lastOffset,
                    ShareFetchResponseData.AcquiredRecords::deliveryCount)
                    .as("member a is still in the group, but its closed fetch took nothing")
                    .containsExactly(tuple(0L, 0L, (short) 1));
        }
    }

    /** Fetches until {@code count} offsets are acquired; the acquired offsets. */
    private static List<Long> acquireAll(RawShareMember member, int count) throws IOException {
        List<Long> offsets = new java.util.ArrayList<>();
        while (offsets.size() < count) {
            ShareFetchResponseData response = member.fetch(10_000);
            assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
            List<Long> got = RawShareMember.acquiredOffsets(response);
            assertThat(got).as("a fetch that waited 10 s acquired nothing").isNotEmpty();
            offsets.addAll(got);
        }
        return offsets;
    }

    private void awaitRequestCount(ApiKeys key, long count) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (broker.apis().requestCount(key) < count && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(broker.apis().requestCount(key)).isEqualTo(count);
    }

    private Errors settleOne(String groupId, String memberId, String topic, long first, long last, byte type)
            throws IOException {
        ShareSettle.Response response = settle(new ShareSettle.Request(groupId, memberId, List.of(
                new ShareSettle.PartitionBatches(topic, 0, List.of(new ShareSettle.Batch(first, last, type))))));
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.partitions()).hasSize(1);
        return Errors.forCode(response.partitions().get(0).errorCode());
    }

    private ShareSettle.Response settle(ShareSettle.Request request) throws IOException {
        try (Socket socket = RawShareMember.connect(broker)) {
            return settle(socket, request);
        }
    }

    private static ShareSettle.Response settle(Socket socket, ShareSettle.Request request) throws IOException {
        ByteBuffer frame = new ExtensionHeader(ExtensionApi.SHARE_SETTLE.key(), ShareSettle.VERSION, 42, "t")
                .frame(request.toStruct());
        OutputStream out = socket.getOutputStream();
        out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
        out.flush();
        ByteBuffer response = RawShareMember.read(socket);
        assertThat(response.getInt()).isEqualTo(42);
        return ShareSettle.Response.read(response);
    }

    private ShareBrowse.Response browse(String groupId, String topic) throws IOException {
        try (Socket socket = RawShareMember.connect(broker)) {
            ByteBuffer frame = new ExtensionHeader(ExtensionApi.SHARE_BROWSE.key(), ShareBrowse.VERSION, 43, "t")
                    .frame(new ShareBrowse.Request(groupId, topic, 0, -1, 1 << 20).toStruct());
            OutputStream out = socket.getOutputStream();
            out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
            out.flush();
            ByteBuffer response = RawShareMember.read(socket);
            assertThat(response.getInt()).isEqualTo(43);
            ShareBrowse.Response read = ShareBrowse.Response.read(response);
            assertThat(read.errorCode()).isEqualTo(Errors.NONE.code());
            return read;
        }
    }

    private void createTopic(String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", TestBrokers.bootstrap(broker)))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
    }

    private void produce(String topic, int count) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers",
                TestBrokers.bootstrap(broker)), new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, "v" + i)).get();
            }
        }
    }
}
