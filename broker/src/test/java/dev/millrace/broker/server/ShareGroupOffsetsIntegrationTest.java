package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Share-group offsets and deletion through the Admin client (listShareGroupOffsets,
 * alterShareGroupOffsets, deleteShareGroups), and ShareFetch refused to a member id that is not in
 * the group.
 */
@Timeout(60)
class ShareGroupOffsetsIntegrationTest {

    private static final String TOPIC = "queue";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @TempDir
    Path dataDir;

    private BrokerServer broker;
    private Admin admin;

    @BeforeEach
    void start() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of("group.share.auto.offset.reset", "earliest"));
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker)));
        admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker)), new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(TOPIC, 0, null, Integer.toString(i))).get();
            }
        }
    }

    @AfterEach
    void stop() {
        if (admin != null) {
            admin.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void shouldDescribeAndResetTheStartOffsetOfAnEmptyShareGroup() throws Exception {
        try (KafkaShareConsumer<String, String> consumer = shareConsumer("workers")) {
            assertThat(acceptAll(consumer, 10)).hasSize(10);
        }
        SharePartitionOffsetInfo consumed = offsets("workers").get(TP);
        assertThat(consumed.startOffset()).isEqualTo(10);
        assertThat(consumed.lag()).contains(0L);

        admin.alterShareGroupOffsets("workers", Map.of(TP, 4L)).all().get();
        SharePartitionOffsetInfo reset = offsets("workers").get(TP);
        assertThat(reset.startOffset()).isEqualTo(4);
        assertThat(reset.lag()).contains(6L);

        try (KafkaShareConsumer<String, String> consumer = shareConsumer("workers")) {
            assertThat(acceptAll(consumer, 6)).containsExactly("4", "5", "6", "7", "8", "9");
            assertThatThrownBy(() -> admin.alterShareGroupOffsets("workers", Map.of(TP, 0L)).all().get())
                    .as("altering the offsets of a group with members").isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(GroupNotEmptyException.class);
        }
    }

    @Test
    void shouldDeleteAnEmptyShareGroupWithItsStateButNotOneWithMembers() throws Exception {
        try (KafkaShareConsumer<String, String> consumer = shareConsumer("gone")) {
            assertThat(acceptAll(consumer, 10)).hasSize(10);
            assertThatThrownBy(() -> admin.deleteShareGroups(List.of("gone")).all().get())
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(GroupNotEmptyException.class);
        }
        admin.deleteShareGroups(List.of("gone")).all().get();

        assertThatThrownBy(() -> admin.describeShareGroups(List.of("gone")).all().get())
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(GroupIdNotFoundException.class);
        assertThat(admin.listGroups(ListGroupsOptions.forShareGroups()).all().get())
                .extracting(GroupListing::groupId).doesNotContain("gone");
        try (KafkaShareConsumer<String, String> consumer = shareConsumer("gone")) {
            assertThat(acceptAll(consumer, 10)).as("a deleted group starts afresh from the earliest offset")
                    .hasSize(10);
        }
    }

    @Test
    void shouldRefuseAShareFetchFromAMemberIdThatIsNotInTheGroup() throws Exception {
        Uuid topicId = admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).topicId();
        ShareFetchRequestData data = new ShareFetchRequestData().setGroupId("workers")
                .setMemberId(Uuid.randomUuid().toString()).setShareSessionEpoch(0).setMaxWaitMs(0).setMinBytes(1)
                .setMaxBytes(1 << 20).setMaxRecords(100).setBatchSize(100);
        ShareFetchRequestData.FetchTopic topic = new ShareFetchRequestData.FetchTopic().setTopicId(topicId);
        topic.partitions().add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(0));
        data.topics().add(topic);

        ShareFetchResponse response = send(new ShareFetchRequest.Builder(data).build((short) 1));

        assertThat(Errors.forCode(response.data().errorCode())).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(response.data().responses()).isEmpty();
        assertThat(offsets("workers")).as("nothing was acquired for the stranger").isEmpty();
    }

    @Test
    void shouldRefuseAShareAcknowledgeFromAMemberIdWithoutASession() throws Exception {
        Uuid topicId = admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).topicId();
        try (KafkaShareConsumer<String, String> holder = shareConsumer("ackers")) {
            holder.subscribe(List.of(TOPIC));
            List<ConsumerRecord<String, String>> held = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (held.isEmpty() && System.nanoTime() < deadline) {
                holder.poll(Duration.ofMillis(200)).forEach(held::add);
            }
            assertThat(held).isNotEmpty();
            long offset = held.get(0).offset();

            // a stranger (no membership, hence no share session) tries to accept a record the holder has
            org.apache.kafka.common.message.ShareAcknowledgeRequestData data =
                    new org.apache.kafka.common.message.ShareAcknowledgeRequestData().setGroupId("ackers")
                            .setMemberId(Uuid.randomUuid().toString()).setShareSessionEpoch(1);
            var topic = new org.apache.kafka.common.message.ShareAcknowledgeRequestData.AcknowledgeTopic()
                    .setTopicId(topicId);
            var partition = new org.apache.kafka.common.message.ShareAcknowledgeRequestData.AcknowledgePartition()
                    .setPartitionIndex(0);
            partition.acknowledgementBatches().add(
                    new org.apache.kafka.common.message.ShareAcknowledgeRequestData.AcknowledgementBatch()
                            .setFirstOffset(offset).setLastOffset(offset).setAcknowledgeTypes(List.of((byte) 1)));
            topic.partitions().add(partition);
            data.topics().add(topic);
            var request = new org.apache.kafka.common.requests.ShareAcknowledgeRequest.Builder(data).build((short) 1);
            var response = (org.apache.kafka.common.requests.ShareAcknowledgeResponse) sendRaw(
                    ApiKeys.SHARE_ACKNOWLEDGE, request);
            assertThat(Errors.forCode(response.data().errorCode())).isEqualTo(Errors.SHARE_SESSION_NOT_FOUND);

            // the holder still holds it and can accept it itself
            holder.acknowledge(held.get(0), AcknowledgeType.ACCEPT);
            held.subList(1, held.size()).forEach(r -> holder.acknowledge(r, AcknowledgeType.RELEASE));
            holder.commitSync().values().forEach(r -> assertThat(r).isEmpty());
        }
    }

    private AbstractResponse sendRaw(ApiKeys key, org.apache.kafka.common.requests.AbstractRequest request)
            throws Exception {
        RequestHeader header = new RequestHeader(key, request.version(), "raw", 1);
        String[] address = TestBrokers.bootstrap(broker).split(":");
        try (Socket socket = new Socket(address[0], Integer.parseInt(address[1]))) {
            socket.setSoTimeout(30_000);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            ByteBuffer bytes = request.serializeWithHeader(header);
            out.writeInt(bytes.remaining());
            out.write(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] frame = new byte[in.readInt()];
            in.readFully(frame);
            return AbstractResponse.parseResponse(ByteBuffer.wrap(frame), header);
        }
    }

    private Map<TopicPartition, SharePartitionOffsetInfo> offsets(String group) throws Exception {
        try {
            return admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group).get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return Map.of();
            }
            throw e;
        }
    }

    private static List<String> acceptAll(KafkaShareConsumer<String, String> consumer, int count) {
        consumer.subscribe(List.of(TOPIC));
        List<String> received = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (received.size() < count && System.nanoTime() < deadline) {
            var records = consumer.poll(Duration.ofMillis(200));
            for (ConsumerRecord<String, String> record : records) {
                received.add(record.value());
                consumer.acknowledge(record, AcknowledgeType.ACCEPT);
            }
            if (!records.isEmpty()) {
                consumer.commitSync().values().forEach(r -> assertThat(r).isEmpty());
            }
        }
        return received;
    }

    private KafkaShareConsumer<String, String> shareConsumer(String groupId) {
        return new KafkaShareConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker),
                ConsumerConfig.GROUP_ID_CONFIG, groupId, "share.acknowledgement.mode", "explicit"),
                new StringDeserializer(), new StringDeserializer());
    }

    private ShareFetchResponse send(ShareFetchRequest request) throws Exception {
        return (ShareFetchResponse) sendRaw(ApiKeys.SHARE_FETCH, request);
    }
}
