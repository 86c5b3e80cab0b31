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

import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
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
 * A listener whose request handler misbehaves: each failure is answered with the request's error response or closes
 * only that connection, is counted, never reaches the event loop, and never leaves the connection's request slot
 * stuck; other connections keep being served.
 */
@Timeout(30)
class KafkaServerHandlerFailureTest {

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
        assertThat(server.stats().unexpectedErrors()).as("exceptions that reached the event loop").isZero();
        server.close();
        requestThreads.shutdownNow();
    }

    /** ApiVersions: answered; ListOffsets: client id says how to fail. */
    private CompletableFuture<AbstractResponse> handle(RequestContext context, AbstractRequest request) {
        if (request.apiKey() == ApiKeys.API_VERSIONS) {
            return CompletableFuture.completedFuture(new ApiVersionsResponse(VERSIONS.toResponseData()));
        }
        return switch (context.clientId()) {
            case "throws" -> throw new IllegalStateException("a handler bug");
            case "null-future" -> null;
            case "fails" -> CompletableFuture.failedFuture(new NullPointerException("another handler bug"));
            case "not-yet" -> CompletableFuture.failedFuture(new NotServingException("the broker is starting"));
            // leader epoch is not in ListOffsets v1: the response cannot be written
            default -> CompletableFuture.completedFuture(new ListOffsetsResponse(new ListOffsetsResponseData()
                    .setTopics(List.of(new ListOffsetsResponseData.ListOffsetsTopicResponse().setName("t")
                            .setPartitions(List.of(new ListOffsetsResponseData.ListOffsetsPartitionResponse()
                                    .setLeaderEpoch(5)))))));
        };
    }

    @Test
    void shouldAnswerUnknownServerErrorWhenTheHandlerThrowsOrFails() throws Exception {
        try (Client client = new Client(address)) {
            int correlationId = 0;
            for (String failure : List.of("throws", "null-future", "fails")) {
                client.send(listOffsets(), (short) 1, failure, ++correlationId);
                ListOffsetsResponse response = (ListOffsetsResponse) client.read(
                        new RequestHeader(ApiKeys.LIST_OFFSETS, (short) 1, failure, correlationId));
                assertThat(Errors.forCode(response.data().topics().get(0).partitions().get(0).errorCode()))
                        .isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
            }
            client.send(new ApiVersionsRequestData(), (short) 0, "after", 99); // the connection still works
            assertThat(client.readFrame().getInt(0)).isEqualTo(99);
        }
        assertThat(server.stats().handlerFailures()).isEqualTo(3);
    }

    @Test
    void shouldCloseOnlyThatConnectionWhenTheResponseCannotBeWritten() throws Exception {
        try (Client bad = new Client(address); Client good = new Client(address)) {
            bad.send(listOffsets(), (short) 1, "unwritable", 1);
            assertThat(bad.readUntilClosed()).as("closed by the broker").isTrue();
            good.send(new ApiVersionsRequestData(), (short) 0, "good", 2);
            assertThat(good.readFrame().getInt(0)).isEqualTo(2);
        }
        assertThat(server.stats().closed(CloseReason.RESPONSE_FAILED)).isEqualTo(1);
        assertThat(server.stats().handlerFailures()).isEqualTo(1);
    }

    /** A node that does not serve a request yet closes that connection, answers nothing and counts no failure. */
    @Test
    void shouldCloseTheConnectionWithoutAnAnswerWhenTheRequestIsNotServedYet() throws Exception {
        try (Client early = new Client(address); Client other = new Client(address)) {
            early.send(new ApiVersionsRequestData(), (short) 0, "not-yet", 1);
            assertThat(early.readFrame().getInt(0)).as("ApiVersions is answered").isEqualTo(1);
            early.send(listOffsets(), (short) 1, "not-yet", 2);
            assertThat(early.readUntilClosed()).as("closed by the broker, no response").isTrue();
            other.send(listOffsets(), (short) 1, "fails", 3);
            ListOffsetsResponse response = (ListOffsetsResponse) other.read(
                    new RequestHeader(ApiKeys.LIST_OFFSETS, (short) 1, "fails", 3));
            assertThat(response.data().topics()).as("another connection is still served").hasSize(1);
        }
        assertThat(server.stats().closed(CloseReason.NOT_SERVING)).isEqualTo(1);
        assertThat(server.stats().handlerFailures()).as("only the other connection's failure").isEqualTo(1);
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

        AbstractResponse read(RequestHeader header) throws IOException {
            return AbstractResponse.parseResponse(readFrame(), header);
        }

        boolean readUntilClosed() throws IOException {
            try {
                return in.read() < 0;
            } catch (java.net.SocketException reset) {
                return true;
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
