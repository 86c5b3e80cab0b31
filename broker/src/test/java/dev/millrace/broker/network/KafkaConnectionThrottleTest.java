package dev.millrace.broker.network;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * KIP-219 on the connection: a response with throttle_time_ms is sent at once and the connection then serves
 * nothing for that time (a request already sent waits); a client of a version that predates KIP-219 gets the
 * response only after the throttle time. The connection stays open either way.
 */
@Timeout(30)
class KafkaConnectionThrottleTest {

    private static final int THROTTLE_MS = 500;
    private static final ApiVersionTable VERSIONS = new ApiVersionTable.Builder().addAll(ApiKeys.API_VERSIONS)
            .addAll(ApiKeys.LIST_OFFSETS).build();

    private final ExecutorService requestThreads = Executors.newFixedThreadPool(2);
    private KafkaServer server;
    private InetSocketAddress address;

    @BeforeEach
    void start() throws InterruptedException {
        server = new KafkaServer("127.0.0.1", 0, ConnectionLimits.DEFAULTS, this::handle, VERSIONS, requestThreads);
        address = server.start();
    }

    @AfterEach
    void stop() {
        assertThat(server.stats().unexpectedErrors()).isZero();
        server.close();
        requestThreads.shutdownNow();
    }

    /** ApiVersions: answered; ListOffsets: answered with a throttle time. */
    private CompletableFuture<AbstractResponse> handle(RequestContext context, AbstractRequest request) {
        if (request.apiKey() == ApiKeys.API_VERSIONS) {
            return CompletableFuture.completedFuture(new ApiVersionsResponse(VERSIONS.toResponseData()));
        }
        ListOffsetsResponse response = new ListOffsetsResponse(new ListOffsetsResponseData().setTopics(List.of(
                new ListOffsetsResponseData.ListOffsetsTopicResponse().setName("t").setPartitions(List.of(
                        new ListOffsetsResponseData.ListOffsetsPartitionResponse())))));
        response.maybeSetThrottleTimeMs(THROTTLE_MS);
        return CompletableFuture.completedFuture(response);
    }

    @Test
    void shouldSendTheResponseFirstThenMuteTheConnectionForTheThrottleTime() throws Exception {
        try (Client client = new Client(address)) {
            long sent = System.nanoTime();
            client.send(listOffsets(), (short) 3, "throttled", 1);
            client.send(new ApiVersionsRequestData(), (short) 0, "throttled", 2);
            assertThat(client.readFrame().getInt(0)).isEqualTo(1);
            long firstMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            assertThat(firstMs).as("the throttled response comes at once").isLessThan(THROTTLE_MS);
            assertThat(client.readFrame().getInt(0)).isEqualTo(2);
            long secondMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            assertThat(secondMs).as("the next request waits for the throttle time").isGreaterThanOrEqualTo(THROTTLE_MS);
        }
        assertThat(server.stats().closed(CloseReason.IDLE)).isZero();
    }

    @Test
    void shouldDelayTheResponseForAClientThatDoesNotThrottleItself() throws Exception {
        try (Client client = new Client(address)) {
            long sent = System.nanoTime();
            client.send(listOffsets(), (short) 1, "old-client", 1); // ListOffsets before v3: no client throttling
            assertThat(client.readFrame().getInt(0)).isEqualTo(1);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent)).isGreaterThanOrEqualTo(THROTTLE_MS);
            client.send(new ApiVersionsRequestData(), (short) 0, "old-client", 2);
            assertThat(client.readFrame().getInt(0)).as("then served as usual").isEqualTo(2);
        }
    }

    private static ListOffsetsRequestData listOffsets() {
        return new ListOffsetsRequestData().setReplicaId(-1).setTopics(List.of(
                new ListOffsetsRequestData.ListOffsetsTopic().setName("t").setPartitions(List.of(
                        new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1)))));
    }

    /** A blocking client on a plain socket. Not thread-safe. */
    private static final class Client implements AutoCloseable {
        private final Socket socket;
        private final DataOutputStream out;
        private final DataInputStream in;

        Client(InetSocketAddress address) throws IOException {
            socket = new Socket(address.getAddress(), address.getPort());
            socket.setSoTimeout(20_000);
            out = new DataOutputStream(socket.getOutputStream());
            in = new DataInputStream(socket.getInputStream());
        }

        void send(ApiMessage data, short version, String clientId, int correlationId) throws IOException {
            RequestHeader header = new RequestHeader(ApiKeys.forId(data.apiKey()), version, clientId, correlationId);
            ByteBuffer frame = RequestUtils.serialize(header.data(), header.headerVersion(), data, version);
            out.writeInt(frame.remaining());
            out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
            out.flush();
        }

        ByteBuffer readFrame() throws IOException {
            byte[] frame = new byte[in.readInt()];
            in.readFully(frame);
            return ByteBuffer.wrap(frame);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
