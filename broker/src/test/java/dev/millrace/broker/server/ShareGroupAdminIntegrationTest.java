package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The Admin client's view of share groups: DescribeShareGroups and ListGroups with type filters. */
class ShareGroupAdminIntegrationTest {

    @TempDir
    Path dataDir;

    private BrokerServer broker;

    @AfterEach
    void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    @Timeout(30)
    void shouldDescribeAndListAShareGroupWithItsMembersAndAssignment() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of("group.share.auto.offset.reset", "earliest"));
        String bootstrap = TestBrokers.bootstrap(broker);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic("queue", 2, (short) 1))).all().get();
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap), new StringSerializer(), new StringSerializer())) {
                producer.send(new ProducerRecord<>("queue", 0, null, "x")).get();
            }
            Map<String, Object> config = new HashMap<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                    ConsumerConfig.GROUP_ID_CONFIG, "workers", ConsumerConfig.CLIENT_ID_CONFIG, "worker-1"));
            try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(config,
                    new StringDeserializer(), new StringDeserializer())) {
                consumer.subscribe(List.of("queue"));
                while (consumer.poll(Duration.ofMillis(100)).isEmpty()) {
                    // joined once it receives the record
                }

                ShareGroupDescription described = admin.describeShareGroups(List.of("workers"))
                        .describedGroups().get("workers").get();
                List<GroupListing> shareGroups = List.copyOf(admin.listGroups(ListGroupsOptions.forShareGroups())
                        .all().get());
                List<GroupListing> consumerGroups = List.copyOf(admin.listGroups(
                        ListGroupsOptions.forConsumerGroups()).all().get());

                assertThat(described.groupState()).isEqualTo(GroupState.STABLE);
                assertThat(described.members()).hasSize(1);
                ShareMemberDescription member = described.members().iterator().next();
                assertThat(member.clientId()).isEqualTo("worker-1");
                assertThat(member.assignment().topicPartitions()).containsExactlyInAnyOrder(
                        new TopicPartition("queue", 0), new TopicPartition("queue", 1));
                assertThat(shareGroups).extracting(GroupListing::groupId).containsExactly("workers");
                assertThat(shareGroups.get(0).type()).contains(GroupType.SHARE);
                assertThat(consumerGroups).extracting(GroupListing::groupId).doesNotContain("workers");
            }
        }
    }
}
