package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ExtensionHeader;
import dev.millrace.protocol.ext.ShareBrowse;
import dev.millrace.protocol.ext.TxnShareAcknowledge;

/**
 * The extension APIs over the wire. TxnShareAcknowledge: bad fields, an unknown transaction or member get errors
 * naming them and hold nothing. ShareBrowse: advertised in ApiVersions, shows what a share group has not settled
 * (after real KafkaShareConsumer acknowledgements), answers bad fields with an error naming them, and closes only
 * the offending connection for an unknown extension key or a malformed body.
 */
@Timeout(60)
class ShareBrowseIntegrationTest {

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
    void apiVersionsAdvertisesTheExtension() throws Exception {
        try (Socket socket = connect()) {
            RequestHeader header = new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "t", 7);
            ByteBuffer frame = new ApiVersionsRequest(new ApiVersionsRequestData().setClientSoftwareName("t")
                    .setClientSoftwareVersion("1"), (short) 3).serializeWithHeader(header);
            ByteBuffer response = roundTrip(socket, sized(frame));
            ApiVersionsResponse parsed = (ApiVersionsResponse) org.apache.kafka.common.requests.AbstractResponse
                    .parseResponse(response, header);
            ApiVersion browse = parsed.data().apiKeys().find(ExtensionApi.SHARE_BROWSE.key());
            assertThat(browse).isNotNull();
            assertThat(browse.maxVersion()).isEqualTo(ShareBrowse.VERSION);
        }
    }

    @Test
    void showsRecordsTheGroupHasNotSettled() throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers",
                TestBrokers.bootstrap(broker)), new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < 6; i++) {
                producer.send(new ProducerRecord<>("browsed", "v" + i)).get();
            }
        }
        ShareBrowse.Response before = browse(new ShareBrowse.Request("g", "browsed", 0, -1, 1 << 20));
        assertThat(before.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(visible(before)).containsExactly("v0", "v1", "v2", "v3", "v4", "v5");
        assertThat(before.nextOffset()).isEqualTo(6);
        assertThat(before.endOffset()).isEqualTo(6);

        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(Map.of(
                "bootstrap.servers", TestBrokers.bootstrap(broker), ConsumerConfig.GROUP_ID_CONFIG, "g",
                ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 3), new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of("browsed"));
            List<ConsumerRecord<String, String>> got = new ArrayList<>();
            while (got.isEmpty()) {
                consumer.poll(Duration.ofMillis(200)).forEach(got::add);
            }
            for (ConsumerRecord<String, String> r : got) {
                // accept v0 and v2, reject v1 (archived); anything else goes back
                AcknowledgeType type = switch (r.value()) {
                    case "v0", "v2" -> AcknowledgeType.ACCEPT;
                    case "v1" -> AcknowledgeType.REJECT;
                    default -> AcknowledgeType.RELEASE;
                };
                consumer.acknowledge(r, type);
            }
            consumer.commitSync(Duration.ofSeconds(10));
            assertThat(got).extracting(ConsumerRecord::value).contains("v0", "v1", "v2");

            ShareBrowse.Response after = browse(new ShareBrowse.Request("g", "browsed", 0, -1, 1 << 20));
            assertThat(after.startOffset()).isEqualTo(3);
            assertThat(visible(after)).containsExactly("v3", "v4", "v5");
            // from an explicit offset below the start offset: read from the start offset
            assertThat(visible(browse(new ShareBrowse.Request("g", "browsed", 0, 1, 1 << 20))))
                    .containsExactly("v3", "v4", "v5");
            // another group has settled nothing
            assertThat(visible(browse(new ShareBrowse.Request("other", "browsed", 0, -1, 1 << 20)))).hasSize(6);
        }
    }

    @Test
    void badFieldsAreAnsweredWithErrorsNamingThem() throws Exception {
        ShareBrowse.Response unknown = browse(new ShareBrowse.Request("g", "no-such-topic", 0, -1, 1024));
        assertThat(Errors.forCode(unknown.errorCode())).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(unknown.errorMessage()).contains("no-such-topic");
        ShareBrowse.Response noBytes = browse(new ShareBrowse.Request("g", "__consumer_offsets", 0, -1, 0));
        assertThat(Errors.forCode(noBytes.errorCode())).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(noBytes.errorMessage()).contains("max_bytes");
    }

    @Test
    void unknownKeyOrMalformedBodyClosesOnlyThatConnection() throws Exception {
        try (Socket socket = connect()) {
            ByteBuffer frame = new ExtensionHeader((short) (ExtensionApi.LAST_KEY), (short) 0, 1, "t")
                    .frame(new ShareBrowse.Request("g", "t", 0, -1, 1).toStruct());
            assertThat(closedAfter(socket, frame)).isTrue();
        }
        try (Socket socket = connect()) {
            ByteBuffer whole = new ExtensionHeader(ExtensionApi.SHARE_BROWSE.key(), (short) 0, 2, "t")
                    .frame(new ShareBrowse.Request("g", "t", 0, -1, 1).toStruct());
            // cut the body short, keep the frame size consistent
            ByteBuffer cut = ByteBuffer.allocate(whole.remaining() - 6);
            cut.putInt(whole.remaining() - 10);
            cut.put(whole.array(), 4, whole.remaining() - 10);
            assertThat(closedAfter(socket, cut.flip())).isTrue();
        }
        try (Socket socket = connect()) {
            ByteBuffer frame = new ExtensionHeader(ExtensionApi.SHARE_BROWSE.key(), (short) 9, 3, "t")
                    .frame(new ShareBrowse.Request("g", "t", 0, -1, 1).toStruct());
            assertThat(closedAfter(socket, frame)).isTrue();
        }
        // the broker keeps serving
        assertThat(browse(new ShareBrowse.Request("g", "__consumer_offsets", 0, -1, 1024)).errorCode())
                .isEqualTo(Errors.NONE.code());
    }

    @Test
    void txnShareAcknowledgeAnswersBadFieldsWithErrorsNamingThem() throws Exception {
        assertThat(txnAck(new TxnShareAcknowledge.Request("tx", "g", "c", "__consumer_offsets", 0, List.of())))
                .satisfies(r -> {
                    assertThat(Errors.forCode(r.errorCode())).isEqualTo(Errors.INVALID_REQUEST);
                    assertThat(r.errorMessage()).contains("offsets");
                });
        assertThat(txnAck(new TxnShareAcknowledge.Request("tx", "g", "c", "no-such-topic", 0, List.of(0L))))
                .satisfies(r -> {
                    assertThat(Errors.forCode(r.errorCode())).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
                    assertThat(r.errorMessage()).contains("no-such-topic");
                });
        // a share-partition with a member holding records, but no such transaction: nothing is held
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers",
                TestBrokers.bootstrap(broker)), new StringSerializer(), new StringSerializer());
             KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(Map.of(
                     "bootstrap.servers", TestBrokers.bootstrap(broker), ConsumerConfig.GROUP_ID_CONFIG, "held",
                     ConsumerConfig.CLIENT_ID_CONFIG, "holder",
                     ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit"), new StringDeserializer(),
                     new StringDeserializer())) {
            producer.send(new ProducerRecord<>("txn-acked", "v")).get();
            consumer.subscribe(List.of("txn-acked"));
            List<ConsumerRecord<String, String>> got = new ArrayList<>();
            while (got.isEmpty()) {
                consumer.poll(Duration.ofMillis(200)).forEach(got::add);
            }
            String holder;
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", TestBrokers.bootstrap(broker)))) {
                holder = admin.describeShareGroups(List.of("held")).all().get(10, TimeUnit.SECONDS).get("held")
                        .members().iterator().next().consumerId();
            }
            TxnShareAcknowledge.Response noTxn = txnAck(new TxnShareAcknowledge.Request("no-such-txn", "held",
                    holder, "txn-acked", 0, List.of(0L)));
            assertThat(Errors.forCode(noTxn.errorCode())).isEqualTo(Errors.INVALID_TXN_STATE);
            assertThat(noTxn.errorMessage()).contains("no-such-txn");
            TxnShareAcknowledge.Response stranger = txnAck(new TxnShareAcknowledge.Request("no-such-txn", "held",
                    "stranger", "txn-acked", 0, List.of(0L)));
            assertThat(Errors.forCode(stranger.errorCode())).isEqualTo(Errors.INVALID_RECORD_STATE);
            assertThat(stranger.errorMessage()).contains("stranger");
            // the holder still holds its record and accepts it as usual
            consumer.acknowledge(got.get(0), AcknowledgeType.ACCEPT);
            consumer.commitSync(Duration.ofSeconds(10)).values().forEach(e -> assertThat(e).isEmpty());
        }
    }

    private TxnShareAcknowledge.Response txnAck(TxnShareAcknowledge.Request request) throws IOException {
        return TxnShareAcknowledge.Response.read(call(ExtensionApi.TXN_SHARE_ACKNOWLEDGE, TxnShareAcknowledge.VERSION,
                request.toStruct()));
    }

    private static List<String> visible(ShareBrowse.Response r) {
        List<String> out = new ArrayList<>();
        if (r.records() == null) {
            return out;
        }
        for (RecordBatch batch : MemoryRecords.readableRecords(r.records()).batches()) {
            for (Record record : batch) {
                if (record.offset() < r.endOffset() && !r.isHidden(record.offset())
                        && record.offset() >= r.startOffset()) {
                    ByteBuffer v = record.value();
                    byte[] bytes = new byte[v.remaining()];
                    v.get(bytes);
                    out.add(new String(bytes, java.nio.charset.StandardCharsets.UTF_8));
                }
            }
        }
        return out;
    }

    private ShareBrowse.Response browse(ShareBrowse.Request request) throws IOException {
        return ShareBrowse.Response.read(call(ExtensionApi.SHARE_BROWSE, ShareBrowse.VERSION, request.toStruct()));
    }

    /** One extension request on a connection of its own; the response body. */
    private ByteBuffer call(ExtensionApi api, short version, Struct body) throws IOException {
        try (Socket socket = connect()) {
            ByteBuffer response = roundTrip(socket, new ExtensionHeader(api.key(), version, 42, "t").frame(body));
            assertThat(response.getInt()).isEqualTo(42);
            return response;
        }
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket("127.0.0.1", broker.boundAddress().getPort());
        socket.setSoTimeout(10_000);
        return socket;
    }

    private static ByteBuffer sized(ByteBuffer body) {
        ByteBuffer out = ByteBuffer.allocate(4 + body.remaining());
        out.putInt(body.remaining()).put(body);
        return out.flip();
    }

    private static ByteBuffer roundTrip(Socket socket, ByteBuffer frame) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
        out.flush();
        DataInputStream in = new DataInputStream(socket.getInputStream());
        byte[] bytes = new byte[in.readInt()];
        in.readFully(bytes);
        return ByteBuffer.wrap(bytes);
    }

    private static boolean closedAfter(Socket socket, ByteBuffer frame) throws IOException {
        try {
            roundTrip(socket, frame);
            return false;
        } catch (EOFException | java.net.SocketException e) {
            return true;
        }
    }
}
