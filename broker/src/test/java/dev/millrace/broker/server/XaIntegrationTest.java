package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.cli.XaClient;
import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ExtensionHeader;
import dev.millrace.protocol.ext.XaCodes;
import dev.millrace.protocol.ext.XaComplete;
import dev.millrace.protocol.ext.XaPrepare;
import dev.millrace.protocol.ext.XaRecover;
import dev.millrace.protocol.ext.XaXid;

/**
 * XA on one broker with the real kafka-clients transactional producer writing the records and the XA extension
 * frames sent over plain sockets ({@link XaClient}): a prepared branch is committed or rolled back by Xid from
 * another connection after its producer is gone, stays prepared across a restart, is not disturbed by a new producer
 * of its transactional id, and bad XA requests get clear answers while the broker keeps serving.
 */
@Timeout(120)
class XaIntegrationTest {

    private static final String TOPIC = "xa-topic";

    @TempDir
    Path dataDir;

    private BrokerServer broker;
    private String controllerPort;
    private XaClient client;

    @BeforeEach
    void setUp() throws Exception {
        start();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1))).all().get();
        }
        client = new XaClient(bootstrap(), Duration.ofSeconds(20));
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

    /** Starts (or restarts) the broker; the quorum port stays the same, as a restart needs. */
    private void start() throws Exception {
        if (controllerPort == null) {
            controllerPort = String.valueOf(TestBrokers.freePort());
        }
        broker = TestBrokers.start(dataDir, Map.of("controller.port", controllerPort,
                "transaction.abort.timed.out.transaction.cleanup.interval.ms", "100"));
    }

    private String bootstrap() {
        return TestBrokers.bootstrap(broker);
    }

    private InetSocketAddress address() {
        return new InetSocketAddress("127.0.0.1", broker.boundAddress().getPort());
    }

    static XaXid xid(String gtrid) {
        return new XaXid(0x4d52, gtrid.getBytes(StandardCharsets.UTF_8), new byte[] {1});
    }

    static KafkaProducer<String, String> producer(String bootstrap, String transactionalId) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    /**
     * Writes {@code values} (round robin over the topic's two partitions) in a transaction of {@code transactionalId}
     * and prepares it as {@code xid} at {@code coordinator}, then closes the producer (which sends an abort, refused
     * by the coordinator without touching the branch).
     */
    static void prepareBranch(String bootstrap, XaClient client, InetSocketAddress coordinator,
                              String transactionalId, XaXid xid, String... values) throws Exception {
        KafkaProducer<String, String> producer = producer(bootstrap, transactionalId);
        try {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < values.length; i++) {
                producer.send(new ProducerRecord<>(TOPIC, i % 2, null, values[i]));
            }
            producer.flush();
            XaPrepare.Response prepared = client.prepare(coordinator, new XaPrepare.Request(transactionalId, -1,
                    (short) -1, xid));
            assertThat(prepared.xaCode()).as("prepare of " + xid + ": " + prepared.errorMessage())
                    .isEqualTo(XaCodes.XA_OK);
        } finally {
            producer.close(Duration.ofSeconds(10));
        }
    }

    @Test
    void shouldCommitByXidFromAnotherConnectionAfterTheProducerIsGoneAndShowTheRecordsOnce() throws Exception {
        XaXid xid = xid("commit-me");
        prepareBranch(bootstrap(), client, address(), "app-tx-1", xid, "a", "b", "c");
        assertThat(ReadCommitted.values(bootstrap(), TOPIC, 2)).as("prepared: invisible").isEmpty();

        try (KafkaProducer<String, String> next = producer(bootstrap(), "app-tx-1")) {
            next.initTransactions(); // a new producer of the id: neither fences nor aborts the branch
            next.beginTransaction();
            next.send(new ProducerRecord<>(TOPIC, 0, null, "after"));
            next.commitTransaction();
        }
        assertThat(ReadCommitted.values(bootstrap(), TOPIC, 2)).as("behind the prepared branch").doesNotContain(
                "a", "b", "c");
        assertThat(client.recoverAll(null)).singleElement().satisfies(l -> {
            assertThat(l.branch().xid()).isEqualTo(xid);
            assertThat(l.branch().state()).isEqualTo(XaRecover.BranchState.PREPARED);
            assertThat(l.branch().transactionalId()).isEqualTo("app-tx-1");
        });

        XaComplete.Response committed = client.complete(xid, XaComplete.Action.COMMIT, false);
        assertThat(committed.xaCode()).as(committed.errorMessage()).isEqualTo(XaCodes.XA_OK);
        assertThat(ReadCommitted.values(bootstrap(), TOPIC, 2)).containsExactlyInAnyOrder("a", "b", "c", "after");
        assertThat(client.complete(xid, XaComplete.Action.COMMIT, false).xaCode()).as("a repeated commit")
                .isEqualTo(XaCodes.XA_OK);
        assertThat(ReadCommitted.values(bootstrap(), TOPIC, 2)).hasSize(4);
    }

    @Test
    void shouldNeverShowARolledBackBranchAndAnswerALaterCommitRolledBack() throws Exception {
        XaXid xid = xid("roll-me-back");
        prepareBranch(bootstrap(), client, address(), "app-tx-2", xid, "x", "y");
        assertThat(client.complete(xid, XaComplete.Action.ROLLBACK, false).xaCode()).isEqualTo(XaCodes.XA_OK);
        XaComplete.Response late = client.complete(address(), new XaComplete.Request("app-tx-2", xid,
                XaComplete.Action.COMMIT, false));
        assertThat(late.xaCode()).isEqualTo(XaCodes.XA_RBROLLBACK);
        try (KafkaProducer<String, String> next = producer(bootstrap(), "app-tx-2")) {
            next.initTransactions();
            next.beginTransaction();
            next.send(new ProducerRecord<>(TOPIC, 1, null, "z"));
            next.commitTransaction();
        }
        assertThat(ReadCommitted.values(bootstrap(), TOPIC, 2)).containsExactly("z");
    }

    @Test
    void shouldKeepAPreparedBranchAcrossARestartThenCommitIt() throws Exception {
        XaXid xid = xid("survive");
        prepareBranch(bootstrap(), client, address(), "app-tx-3", xid, "r1", "r2");
        client.close();
        broker.close();
        start();
        client = new XaClient(bootstrap(), Duration.ofSeconds(20));

        List<XaClient.Listed> listed = client.recoverAll(null);
        assertThat(listed).singleElement().satisfies(l -> {
            assertThat(l.branch().xid()).isEqualTo(xid);
            assertThat(l.branch().state()).isEqualTo(XaRecover.BranchState.PREPARED);
            assertThat(l.branch().partitionCount()).isEqualTo(2);
        });
        assertThat(ReadCommitted.values(bootstrap(), TOPIC, 2)).isEmpty();
        assertThat(client.complete(xid, XaComplete.Action.COMMIT, false).xaCode()).isEqualTo(XaCodes.XA_OK);
        assertThat(ReadCommitted.values(bootstrap(), TOPIC, 2)).containsExactlyInAnyOrder("r1", "r2");
    }

    @Test
    void shouldAnswerBadXaRequestsClearlyOnAConnectionThatStaysOpen() throws Exception {
        assertThat(List.of(ExtensionApi.XA_PREPARE, ExtensionApi.XA_COMPLETE, ExtensionApi.XA_RECOVER))
                .as("advertised in ApiVersions").allMatch(api -> KafkaApis.VERSIONS.supports(api, (short) 0));
        XaComplete.Response unknown = client.complete(address(), new XaComplete.Request("app-tx-4", xid("nobody"),
                XaComplete.Action.COMMIT, false));
        assertThat(unknown.xaCode()).isEqualTo(XaCodes.XAER_NOTA);
        assertThat(unknown.errorMessage()).contains(xid("nobody").toString());
        XaPrepare.Response nothingOpen = client.prepare(address(), new XaPrepare.Request("app-tx-4", -1,
                (short) -1, xid("nothing")));
        assertThat(nothingOpen.xaCode()).isEqualTo(XaCodes.XAER_PROTO);

        try (Socket socket = new Socket("127.0.0.1", broker.boundAddress().getPort())) {
            socket.setSoTimeout(20_000);
            // gtrid of 65 bytes
            ByteBuffer tooLong = ByteBuffer.allocate(2 + 1 + 8 + 2 + 4 + 4 + 65 + 4);
            tooLong.putShort((short) 1).put((byte) 't').putLong(-1).putShort((short) -1).putInt(1).putInt(65)
                    .put(new byte[65]).putInt(0);
            XaPrepare.Response refused = XaPrepare.Response.read(send(socket, ExtensionApi.XA_PREPARE, 1,
                    tooLong.flip()));
            assertThat(refused.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
            assertThat(refused.xaCode()).isEqualTo(XaCodes.XAER_INVAL);
            assertThat(refused.errorMessage()).contains("gtrid must hold 1..64 bytes, not 65");

            // a negative bqual length
            ByteBuffer negative = ByteBuffer.allocate(64);
            negative.putShort((short) 1).put((byte) 't').putInt(1).putInt(1).put((byte) 7).putInt(-3);
            XaComplete.Response badLength = XaComplete.Response.read(send(socket, ExtensionApi.XA_COMPLETE, 2,
                    negative.flip()));
            assertThat(badLength.xaCode()).isEqualTo(XaCodes.XAER_INVAL);
            assertThat(badLength.errorMessage()).contains("malformed XaComplete request");

            // a body cut short after the transactional id
            ByteBuffer truncated = ByteBuffer.allocate(5).putShort((short) 1).put((byte) 't').putShort((short) 0);
            XaComplete.Response cut = XaComplete.Response.read(send(socket, ExtensionApi.XA_COMPLETE, 3,
                    truncated.flip()));
            assertThat(cut.xaCode()).isEqualTo(XaCodes.XAER_INVAL);

            // an unknown action
            Struct valid = new XaComplete.Request("t", xid("g"), XaComplete.Action.ROLLBACK, false).toStruct();
            ByteBuffer badAction = ByteBuffer.allocate(valid.sizeOf());
            valid.writeTo(badAction);
            badAction.put(badAction.limit() - 2, (byte) 9);
            XaComplete.Response action = XaComplete.Response.read(send(socket, ExtensionApi.XA_COMPLETE, 4,
                    badAction.flip()));
            assertThat(action.errorMessage()).contains("action 9");

            // the same connection still serves a valid request
            XaRecover.Response recovered = XaRecover.Response.read(send(socket, ExtensionApi.XA_RECOVER, 5,
                    ByteBuffer.allocate(2).putShort((short) -1).flip()));
            assertThat(recovered.errorCode()).isZero();
            assertThat(recovered.partitions()).containsExactly(0);
        }
        XaXid xid = xid("still-serving");
        prepareBranch(bootstrap(), client, address(), "app-tx-4", xid, "ok");
        assertThat(client.complete(xid, XaComplete.Action.COMMIT, false).xaCode()).isEqualTo(XaCodes.XA_OK);
        assertThat(ReadCommitted.values(bootstrap(), TOPIC, 2)).containsExactly("ok");
    }

    /** Sends {@code body} as request {@code correlationId} of {@code api} on {@code socket}; the response body. */
    private static ByteBuffer send(Socket socket, ExtensionApi api, int correlationId, ByteBuffer body)
            throws Exception {
        Struct header = new ExtensionHeader(api.key(), (short) 0, correlationId, "test").toStruct();
        ByteBuffer frame = ByteBuffer.allocate(4 + header.sizeOf() + body.remaining());
        frame.putInt(header.sizeOf() + body.remaining());
        header.writeTo(frame);
        frame.put(body);
        OutputStream out = socket.getOutputStream();
        out.write(frame.array());
        out.flush();
        DataInputStream in = new DataInputStream(socket.getInputStream());
        byte[] response = new byte[in.readInt()];
        in.readFully(response);
        ByteBuffer buffer = ByteBuffer.wrap(response);
        assertThat(buffer.getInt()).as("correlation id").isEqualTo(correlationId);
        return buffer.slice();
    }
}
