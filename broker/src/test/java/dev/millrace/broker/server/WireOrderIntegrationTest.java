package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;


/**
 * The wire contract seen from a raw socket: responses leave a connection in request order even when
 * an earlier request waits (a long-poll fetch), and a waiting fetch is completed by the append that
 * gives it data rather than by its timeout.
 */
@Timeout(60)
class WireOrderIntegrationTest {

    @TempDir
    Path dataDir;

    private BrokerServer broker;

    @BeforeEach
    void startBroker() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of());
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()))) {
            admin.createTopics(List.of(new NewTopic("quiet", 1, (short) 1))).all().get();
        }
    }

    @AfterEach
    void stopBroker() {
        broker.close();
    }

    private String bootstrap() {
        return TestBrokers.bootstrap(broker);
    }

    @Test
    void shouldAnswerPipelinedRequestsInOrderAndCompleteAParkedFetchOnAppend() throws Exception {
        long fetchesBefore = broker.apis().requestCount(ApiKeys.FETCH);
        try (Socket socket = new Socket("127.0.0.1", broker.boundAddress().getPort())) {
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            short fetchVersion = 12;
            FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(30_000).setMinBytes(1)
                    .setMaxBytes(1 << 20).setIsolationLevel((byte) 0);
            fetch.topics().add(new FetchRequestData.FetchTopic().setTopic("quiet").setTopicId(Uuid.ZERO_UUID)
                    .setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0)
                            .setPartitionMaxBytes(1 << 20).setCurrentLeaderEpoch(-1).setLogStartOffset(-1))));
            write(out, new FetchRequest(fetch, fetchVersion), ApiKeys.FETCH, fetchVersion, 1);
            for (int correlation = 2; correlation <= 4; correlation++) {
                write(out, new ApiVersionsRequest(new ApiVersionsRequestData(), (short) 3), ApiKeys.API_VERSIONS,
                        (short) 3, correlation);
            }
            out.flush();

            // nothing can come back while the fetch at the head of the connection waits for data
            awaitFetchParked(fetchesBefore);
            assertThat(in.available()).isZero();

            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                    new StringSerializer())) {
                producer.send(new ProducerRecord<>("quiet", 0, null, "wake up")).get();
            }

            List<Integer> order = new ArrayList<>();
            FetchResponseData fetched = null;
            for (int i = 0; i < 4; i++) {
                byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                ByteBuffer buffer = ByteBuffer.wrap(frame);
                short headerVersion = i == 0 ? ApiKeys.FETCH.responseHeaderVersion(fetchVersion)
                        : ApiKeys.API_VERSIONS.responseHeaderVersion((short) 3);
                ResponseHeader header = ResponseHeader.parse(buffer, headerVersion);
                order.add(header.correlationId());
                if (header.correlationId() == 1) {
                    fetched = FetchResponse.parse(new ByteBufferAccessor(buffer), fetchVersion).data();
                }
            }
            assertThat(order).containsExactly(1, 2, 3, 4);
            assertThat(fetched).isNotNull();
            assertThat(fetched.responses().get(0).partitions().get(0).records().sizeInBytes()).isPositive();
        }
        // one parked fetch, not a loop of empty ones
        assertThat(broker.apis().requestCount(ApiKeys.FETCH) - fetchesBefore).isEqualTo(1);
    }

    @Test
    void shouldAnswerAnApiVersionsRequestOfAnUnknownVersionWithUnsupportedVersionAndTheServedRange() throws Exception {
        try (Socket socket = new Socket("127.0.0.1", broker.boundAddress().getPort())) {
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            // ApiVersions v99 as a newer client would send it before knowing what this broker serves:
            // header v2 (api key, version, correlation id, null client id, no tagged fields), empty body
            ByteBuffer header = ByteBuffer.allocate(11);
            header.putShort(ApiKeys.API_VERSIONS.id).putShort((short) 99).putInt(42).putShort((short) -1)
                    .put((byte) 0).flip();
            out.writeInt(header.remaining());
            out.write(header.array(), 0, header.remaining());
            out.flush();
            byte[] frame = new byte[in.readInt()];
            in.readFully(frame);
            ByteBuffer buffer = ByteBuffer.wrap(frame);
            assertThat(ResponseHeader.parse(buffer, (short) 0).correlationId()).isEqualTo(42);
            var response = org.apache.kafka.common.requests.ApiVersionsResponse.parse(new ByteBufferAccessor(buffer),
                    (short) 0).data();
            assertThat(response.errorCode()).isEqualTo(org.apache.kafka.common.protocol.Errors.UNSUPPORTED_VERSION.code());
            assertThat(response.apiKeys().find(ApiKeys.PRODUCE.id).maxVersion()).isEqualTo((short) 12);
        }
    }

    private void awaitFetchParked(long fetchesBefore) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (broker.apis().requestCount(ApiKeys.FETCH) == fetchesBefore && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(broker.apis().requestCount(ApiKeys.FETCH)).isEqualTo(fetchesBefore + 1);
    }

    private static void write(DataOutputStream out, AbstractRequest request, ApiKeys key, short version,
                              int correlationId) throws Exception {
        ByteBuffer bytes = request.serializeWithHeader(new RequestHeader(key, version, "wire-test", correlationId));
        out.writeInt(bytes.remaining());
        out.write(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
    }
}
