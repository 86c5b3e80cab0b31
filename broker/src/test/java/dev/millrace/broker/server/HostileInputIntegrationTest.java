package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.network.CloseReason;
import dev.millrace.broker.network.NetworkStats;

/**
 * One broker on loopback, hostile clients on raw sockets, and a well-behaved kafka-clients producer and consumer on
 * the same broker: each hostile case closes that connection (or is answered with an error where Kafka answers) with
 * one log line naming the client's address and the reason, no exception reaches a connection handler, and the
 * well-behaved client keeps being served.
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostileInputIntegrationTest {

    private static final int MAX_REQUEST_BYTES = 1024 * 1024;
    private static final int READ_TIMEOUT_MS = 20_000;

    private BrokerServer broker;
    private InetSocketAddress address;
    private NetworkStats stats;
    private WellBehavedClient client;

    @BeforeAll
    void startBroker(@TempDir Path dataDir) throws Exception {
        broker = TestBrokers.start(dataDir, Map.of("socket.request.max.bytes", String.valueOf(MAX_REQUEST_BYTES)));
        address = broker.boundAddress();
        stats = broker.networkStats();
        client = new WellBehavedClient(TestBrokers.bootstrap(broker), "well-behaved");
        client.roundTrip(3);
    }

    @AfterAll
    void stopBroker() throws Exception {
        if (client != null) {
            client.close();
        }
        if (broker != null) {
            assertThat(broker.networkStats().unexpectedErrors()).as("exceptions that reached a handler").isZero();
            broker.close();
        }
    }

    @Test
    void shouldCloseOnASizePrefixAboveSocketRequestMaxBytes() throws Exception {
        assertClosedFor(CloseReason.OVERSIZED_FRAME, "is above socket.request.max.bytes (" + MAX_REQUEST_BYTES + ")",
                conn -> conn.sendRaw(ByteBuffer.allocate(12).putInt(MAX_REQUEST_BYTES + 1).putLong(42).array()));
    }

    @Test
    void shouldCloseOnANegativeSizePrefix() throws Exception {
        assertClosedFor(CloseReason.NEGATIVE_SIZE, "negative size prefix -2",
                conn -> conn.sendRaw(ByteBuffer.allocate(8).putInt(-2).putInt(7).array()));
    }

    @Test
    void shouldCloseOnAnUnknownApiKey() throws Exception {
        assertClosedFor(CloseReason.UNKNOWN_API_KEY, "unknown API key 999",
                conn -> conn.sendFrame(RawConnection.headerThen((short) 999, (short) 0, new byte[8])));
    }

    @Test
    void shouldCloseOnAnUnknownExtensionApiKey() throws Exception {
        assertClosedFor(CloseReason.UNKNOWN_API_KEY, "unknown extension API key 30098",
                conn -> conn.sendFrame(RawConnection.headerThen((short) 30098, (short) 0, new byte[8])));
    }

    @Test
    void shouldCloseOnAnUnsupportedVersion() throws Exception {
        assertClosedFor(CloseReason.UNSUPPORTED_VERSION, "unsupported version 99 of METADATA",
                conn -> conn.sendFrame(RawConnection.headerThen(ApiKeys.METADATA.id, (short) 99, new byte[8])));
    }

    @Test
    void shouldCloseOnARequestBodyThatDoesNotParse() throws Exception {
        ByteBuffer valid = RawConnection.serialize(new MetadataRequestData().setTopics(List.of(
                new MetadataRequestData.MetadataRequestTopic().setName("some-topic"))), (short) 12, 7);
        ByteBuffer truncated = valid.duplicate().limit(valid.limit() - 6); // the topic name's length says more
        ByteBuffer lying = ByteBuffer.allocate(valid.remaining()).put(valid.duplicate()).flip();
        int name = new String(lying.array(), StandardCharsets.ISO_8859_1).indexOf("some-topic");
        lying.put(name - 1, (byte) 0x7f); // the name's compact length: 126 characters, where 10 are
        assertClosedFor(CloseReason.MALFORMED_REQUEST, "", conn -> conn.sendFrame(truncated));
        assertClosedFor(CloseReason.MALFORMED_REQUEST, "", conn -> conn.sendFrame(lying));
    }

    @Test
    void shouldCloseOnAnEmptyFrame() throws Exception {
        assertClosedFor(CloseReason.MALFORMED_REQUEST, "", conn -> conn.sendRaw(new byte[4]));
    }

    @Test
    void shouldAnswerAnApiVersionsRequestOfAnUnknownVersionWithUnsupportedVersion() throws Exception {
        try (RawConnection conn = RawConnection.open(address, READ_TIMEOUT_MS)) {
            ApiVersionsRequest future = new ApiVersionsRequest.Builder(new ApiVersionsRequestData(), (short) 3,
                    (short) 3).build((short) 3);
            ByteBuffer frame = RawConnection.serialize(future, 11);
            frame.putShort(2, (short) 99); // the header's api_version
            conn.sendFrame(frame);
            RequestHeader v0 = new RequestHeader(ApiKeys.API_VERSIONS, (short) 0, "raw", 11);
            ApiVersionsResponse response = (ApiVersionsResponse) conn.readResponse(v0);
            assertThat(Errors.forCode(response.data().errorCode())).isEqualTo(Errors.UNSUPPORTED_VERSION);
            conn.sendApiVersions(12); // still open and served
            assertThat(conn.readFrame().getInt(0)).isEqualTo(12);
        }
        client.roundTrip(3);
    }

    /** Found by the fuzzer: v1..3 responses cannot carry the leader epoch, and setting it failed every answer. */
    @Test
    void shouldAnswerListOffsetsInVersionsWithoutALeaderEpoch() throws Exception {
        try (RawConnection conn = RawConnection.open(address, READ_TIMEOUT_MS)) {
            for (short version = 1; version <= 4; version++) {
                ListOffsetsRequestData data = new ListOffsetsRequestData().setReplicaId(-1).setTopics(List.of(
                        new ListOffsetsRequestData.ListOffsetsTopic().setName("well-behaved").setPartitions(List.of(
                                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0)
                                        .setTimestamp(ListOffsetsRequest.EARLIEST_TIMESTAMP)))));
                conn.sendFrame(RawConnection.serialize(data, version, version));
                ListOffsetsResponse response = (ListOffsetsResponse) conn.readResponse(
                        new RequestHeader(ApiKeys.LIST_OFFSETS, version, "raw", version));
                var partition = response.data().topics().get(0).partitions().get(0);
                assertThat(Errors.forCode(partition.errorCode())).isEqualTo(Errors.NONE);
                assertThat(partition.offset()).isZero();
                assertThat(partition.leaderEpoch()).isEqualTo(version >= 4 ? 0 : -1);
            }
        }
        assertThat(stats.handlerFailures()).isZero();
    }

    /**
     * Found by the fuzzer (seed 17514915851492): a v10-11 request for an unknown topic id failed (auto-creation looked
     * up a null name; the answer's name, not nullable before v12, failed to serialise).
     */
    @Test
    void shouldAnswerMetadataForAnUnknownTopicIdInEveryVersionThatCarriesIds() throws Exception {
        try (RawConnection conn = RawConnection.open(address, READ_TIMEOUT_MS)) {
            for (short version = 10; version <= 11; version++) {
                MetadataRequestData data = new MetadataRequestData().setTopics(List.of(
                        new MetadataRequestData.MetadataRequestTopic().setName(null).setTopicId(Uuid.randomUuid())));
                conn.sendFrame(RawConnection.serialize(data, version, version));
                MetadataResponse response = (MetadataResponse) conn.readResponse(
                        new RequestHeader(ApiKeys.METADATA, version, "raw", version));
                assertThat(response.data().topics()).hasSize(1);
                assertThat(Errors.forCode(response.data().topics().iterator().next().errorCode()))
                        .as("version %d", version).isEqualTo(Errors.UNKNOWN_TOPIC_ID);
            }
        }
        assertThat(stats.handlerFailures()).isZero();
        assertThat(stats.closed(CloseReason.RESPONSE_FAILED)).isZero();
    }

    @Test
    void shouldLogATruncatedFrameWhenTheClientClosesMidFrame() throws Exception {
        long before = stats.closed(CloseReason.TRUNCATED_FRAME);
        try (LogCapture logs = new LogCapture()) {
            String clientAddress;
            try (RawConnection conn = RawConnection.open(address, READ_TIMEOUT_MS)) {
                clientAddress = conn.localAddress();
                conn.sendApiVersions(1);
                conn.readFrame();
                conn.sendRaw(ByteBuffer.allocate(4 + 50).putInt(100).array()); // 50 of 100 bytes
            }
            awaitCount(() -> stats.closed(CloseReason.TRUNCATED_FRAME), before + 1);
            assertThat(logs.awaitLinesWith(10_000, "Closing connection from " + clientAddress,
                    "TRUNCATED_FRAME", "after 50 of a frame's 100 bytes")).hasSize(1);
        }
        client.roundTrip(3);
    }

    /**
     * A client that sends Fetch requests whose responses are megabytes, then big Produce requests, and never reads:
     * the broker stops reading from it (the response waits, the channel turns unwritable, the queue fills), so what
     * it holds for the connection stays bounded, however much the client goes on sending; the well-behaved client is
     * served meanwhile, and closing the connection frees it all.
     */
    @Test
    void shouldStopReadingFromAClientThatNeverReadsItsResponses() throws Exception {
        String topic = "big-records";
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker));
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, String.valueOf(MAX_REQUEST_BYTES));
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (int i = 0; i < 20; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, new byte[200 * 1024])).get(30, TimeUnit.SECONDS);
            }
        }
        ByteBuffer fetch = RawConnection.serialize(new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0)
                .setMinBytes(1).setMaxBytes(50 << 20).setTopics(List.of(new FetchRequestData.FetchTopic()
                        .setTopic(topic).setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0)
                                .setFetchOffset(0).setPartitionMaxBytes(50 << 20))))), (short) 12, 1);
        ProduceRequestData produce = new ProduceRequestData().setAcks((short) 1).setTimeoutMs(10_000);
        produce.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withRecords(
                        Compression.NONE, new SimpleRecord(new byte[256 * 1024]))))));
        ByteBuffer produceFrame = RawConnection.serialize(produce, (short) 9, 2);
        // one 4 MiB fetch response waiting + a queue of at most 4 MiB and a frame + one read's worth in the decoder;
        // without the limits 64 queued 256 KiB produce frames alone are 16 MiB
        long bound = 10L << 20;
        long limit = 64L << 20;
        try (SocketChannel slow = SocketChannel.open(address)) {
            slow.configureBlocking(false);
            ByteBuffer pending = ByteBuffer.allocate(0);
            long sent = 0;
            int frames = 0;
            long maxBuffered = 0;
            long lastProgress = System.nanoTime();
            // write until the client's socket has taken nothing for a second (the broker stopped reading) or 64 MiB
            while (sent < limit && System.nanoTime() - lastProgress < TimeUnit.SECONDS.toNanos(1)) {
                if (!pending.hasRemaining()) {
                    pending = ByteBuffer.wrap(RawConnection.frame(frames++ < 3 ? fetch : produceFrame));
                }
                int written = slow.write(pending);
                maxBuffered = Math.max(maxBuffered, stats.bufferedBytes());
                if (written > 0) {
                    sent += written;
                    lastProgress = System.nanoTime();
                } else {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
            }
            System.out.printf("slow reader: sent %d bytes; the broker held at most %d%n", sent, maxBuffered);
            assertThat(sent).as("the broker stopped reading").isLessThan(limit);
            assertThat(maxBuffered).as("bytes the broker held after %d bytes were sent", sent).isLessThan(bound);
            client.roundTrip(5);
            assertThat(stats.bufferedBytes()).isLessThan(bound);
        }
        awaitCount(() -> -stats.bufferedBytes(), -(1L << 20)); // freed on close (1 MiB: others' in-flight bytes)
        client.roundTrip(3);
    }

    /** Opens a raw connection, does {@code attack}, and checks the broker closed it once, logged, for {@code reason}. */
    private void assertClosedFor(CloseReason reason, String detail, Attack attack) throws Exception {
        long before = stats.closed(reason);
        long errorsBefore = stats.unexpectedErrors();
        try (LogCapture logs = new LogCapture(); RawConnection conn = RawConnection.open(address, READ_TIMEOUT_MS)) {
            conn.sendApiVersions(1); // a good request first: the connection was a working one
            assertThat(conn.readFrame().getInt(0)).isEqualTo(1);
            attack.run(conn);
            assertThat(conn.awaitClosedByBroker()).as("closed by the broker").isTrue();
            assertThat(stats.closed(reason)).isEqualTo(before + 1);
            assertThat(logs.awaitLinesWith(10_000, "Closing connection from " + conn.localAddress(), "(" + reason + ")",
                    detail)).hasSize(1);
        }
        assertThat(stats.unexpectedErrors()).isEqualTo(errorsBefore);
        client.roundTrip(3);
    }

    private static void awaitCount(LongSupplier count, long atLeast) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (count.getAsLong() < atLeast && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        assertThat(count.getAsLong()).isGreaterThanOrEqualTo(atLeast);
    }

    @FunctionalInterface
    private interface Attack {
        void run(RawConnection connection) throws Exception;
    }
}
