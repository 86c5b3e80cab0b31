package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.share.ShareGroupConfigs;
import dev.millrace.protocol.net.BrokerChannel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;

/**
 * Share-group administration on a three-broker cluster with real kafka-clients, on queues of three partitions
 * replicated three times (each broker leads one):
 *
 * <ul>
 *   <li>a group config set through one broker (sent to it directly, not the active controller) holds on the leaders
 *       of every partition: with {@code share.delivery.count.limit} 2 over the broker's 5, a record released every
 *       time is delivered exactly twice and then archived; the setting is described alike by every broker, and
 *       still holds after every broker stopped and started again;</li>
 *   <li>a bad group config is refused with INVALID_CONFIG naming the setting and the value;</li>
 *   <li>AlterShareGroupOffsets sent to the group's coordinator moves the start offset on every partition, whichever
 *       broker leads it; ListShareGroupOffsets reports each; DeleteShareGroupOffsets makes every leader drop its
 *       share-partition, so that the group reads from the log start again everywhere; so does DeleteGroups.</li>
 * </ul>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ShareGroupClusterAdminIntegrationTest {

    private static final int PARTITIONS = 3;
    private static final int PER_PARTITION = 10;

    private InProcessCluster cluster;
    private Admin admin;
    private EventLoopGroup loop;

    @BeforeAll
    void startCluster(@TempDir Path dir) throws Exception {
        cluster = InProcessCluster.start(dir, 3, Map.of("group.share.auto.offset.reset", "earliest",
                "group.share.delivery.count.limit", "5", "offsets.topic.num.partitions", "3"));
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()));
        loop = new NioEventLoopGroup(1);
    }

    @AfterAll
    void stopCluster() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        if (loop != null) {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void shouldHoldADeliveryLimitSetThroughOneBrokerOnEveryLeaderAndAcrossARestartOfEveryBroker() throws Exception {
        String queue = "limited";
        String group = "limited-workers";
        createQueue(queue);
        int active = cluster.broker(cluster.runningIds().get(0)).controller().activeControllerId().orElseThrow();
        int through = cluster.runningIds().stream().filter(id -> id != active).findFirst().orElseThrow();

        IncrementalAlterConfigsResponse altered = send(through, new IncrementalAlterConfigsRequest.Builder(
                new IncrementalAlterConfigsRequestData().setResources(new IncrementalAlterConfigsRequestData
                        .AlterConfigsResourceCollection(List.of(new IncrementalAlterConfigsRequestData
                        .AlterConfigsResource().setResourceType(ConfigResource.Type.GROUP.id())
                        .setResourceName(group).setConfigs(new IncrementalAlterConfigsRequestData
                                .AlterableConfigCollection(List.of(new IncrementalAlterConfigsRequestData
                                .AlterableConfig().setName(ShareGroupConfigs.DELIVERY_COUNT_LIMIT).setValue("2")
                                .setConfigOperation((byte) 0)).iterator()))).iterator()))),
                ApiKeys.INCREMENTAL_ALTER_CONFIGS.latestVersion());
        assertThat(altered.data().responses()).singleElement().satisfies(r -> {
            assertThat(r.errorCode()).as(r.errorMessage()).isEqualTo(Errors.NONE.code());
        });

        produce(queue, "a");
        assertThat(releaseUntilArchived(queue, group, "a")).allSatisfy((value, deliveries) ->
                assertThat(deliveries).as("deliveries of " + value).containsExactly(1, 2));

        List<Integer> all = cluster.runningIds();
        all.forEach(cluster::stop);
        cluster.startTogether(all);
        for (int id : all) {
            cluster.awaitCondition(() -> cluster.broker(id).controller().image().groupConfigs(group)
                    .containsKey(ShareGroupConfigs.DELIVERY_COUNT_LIMIT), "node " + id + "'s image",
                    Duration.ofSeconds(30));
            assertThat(describeLimit(id, group)).satisfies(c -> {
                assertThat(c.value()).isEqualTo("2");
                assertThat(c.configSource()).isEqualTo(DescribeConfigsResponse.ConfigSource.GROUP_CONFIG.id());
            });
        }
        awaitLeaders(queue);
        produce(queue, "b");
        assertThat(releaseUntilArchived(queue, group, "b")).allSatisfy((value, deliveries) ->
                assertThat(deliveries).as("deliveries of " + value + " after the restart").containsExactly(1, 2));
    }

    @Test
    void shouldRefuseABadGroupConfigNamingTheSettingAndValue() {
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, "badly-configured");

        assertThatThrownBy(() -> alter(group, ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "0"))
                .hasCauseInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("share.delivery.count.limit must be 1..32767, got 0");
        assertThatThrownBy(() -> alter(group, "share.delivery.count.limt", "3"))
                .hasCauseInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("unknown group config 'share.delivery.count.limt'");
        assertThatThrownBy(() -> alter(group, ShareGroupConfigs.REDELIVERY_BACKOFF_MS, "70000"))
                .hasCauseInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("share.redelivery.backoff.ms (70000) must not exceed");
        for (int id : cluster.runningIds()) {
            assertThat(cluster.broker(id).controller().image().groupConfigs("badly-configured")).isEmpty();
        }
    }

    @Test
    void shouldAlterAndDeleteShareGroupOffsetsAndDeleteTheGroupOnPartitionsLedByOtherBrokers() throws Exception {
        String queue = "pinned";
        String group = "pinned-workers";
        List<Integer> leaders = createQueue(queue);
        assertThat(Set.copyOf(leaders)).as("one leader per partition").hasSize(3);
        produce(queue, "a");
        Map<TopicPartition, Long> starts = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            starts.put(new TopicPartition(queue, p), 3L + 2 * p);
        }

        admin.alterShareGroupOffsets(group, starts).all().get(30, TimeUnit.SECONDS);

        Map<TopicPartition, SharePartitionOffsetInfo> described = admin.listShareGroupOffsets(Map.of(group,
                new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group).get(30, TimeUnit.SECONDS);
        starts.forEach((tp, start) -> assertThat(described.get(tp)).as("offsets of " + tp).isNotNull()
                .extracting(SharePartitionOffsetInfo::startOffset).isEqualTo(start));
        Map<Integer, List<Long>> read = acceptAll(queue, group, 30 - 3 - 5 - 7);
        for (int p = 0; p < PARTITIONS; p++) {
            assertThat(read.get(p)).as("offsets read from partition " + p + ", led by " + leaders.get(p))
                    .first().isEqualTo(3L + 2 * p);
        }

        awaitNoMembers(group);
        admin.deleteShareGroupOffsets(group, Set.of(queue)).all().get(30, TimeUnit.SECONDS);

        Map<Integer, List<Long>> again = acceptAll(queue, group, 30);
        for (int p = 0; p < PARTITIONS; p++) {
            assertThat(again.get(p)).as("offsets read again from partition " + p).first().isEqualTo(0L);
        }

        awaitNoMembers(group);
        admin.deleteShareGroups(List.of(group)).all().get(30, TimeUnit.SECONDS);

        Map<Integer, List<Long>> afresh = acceptAll(queue, group, 30);
        for (int p = 0; p < PARTITIONS; p++) {
            assertThat(afresh.get(p)).as("offsets read from partition " + p + " by the group made anew").first()
                    .isEqualTo(0L);
        }
    }

    private void awaitNoMembers(String group) throws InterruptedException {
        cluster.awaitCondition(() -> {
            try {
                return admin.describeShareGroups(List.of(group)).describedGroups().get(group).get(10, TimeUnit.SECONDS)
                        .members().isEmpty();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                return false;
            }
        }, "the consumers to leave " + group, Duration.ofSeconds(30));
    }

    private void alter(ConfigResource resource, String name, String value) throws Exception {
        admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry(name, value),
                AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
    }

    /**
     * Releases every record of {@code prefix} each time it comes, until a marker produced after each record came at
     * least twice arrives on every partition (records acquire in offset order, so a record still available would come
     * before its partition's marker); returns each record's delivery counts as seen.
     */
    private Map<String, List<Integer>> releaseUntilArchived(String queue, String group, String prefix) {
        Map<String, List<Integer>> deliveries = new TreeMap<>();
        Set<Integer> markers = new java.util.HashSet<>();
        boolean markersSent = false;
        try (KafkaShareConsumer<String, String> consumer = shareConsumer(queue, group)) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (markers.size() < PARTITIONS) {
                assertThat(System.nanoTime() - deadline).as("time left; deliveries so far " + deliveries).isNegative();
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.value().startsWith("marker")) {
                        markers.add(r.partition());
                        consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    } else {
                        deliveries.computeIfAbsent(r.value(), v -> new ArrayList<>())
                                .add(r.deliveryCount().orElseThrow().intValue());
                        consumer.acknowledge(r, AcknowledgeType.RELEASE);
                    }
                }
                consumer.commitSync();
                if (!markersSent && deliveries.size() == PARTITIONS * PER_PARTITION
                        && deliveries.values().stream().allMatch(d -> d.size() >= 2)) {
                    markersSent = true;
                    try (KafkaProducer<String, String> producer = producer()) {
                        for (int p = 0; p < PARTITIONS; p++) {
                            producer.send(new ProducerRecord<>(queue, p, null, "marker-" + p));
                        }
                    }
                }
            }
        }
        return deliveries;
    }

    /** Accepts what the group gets until {@code count} records came; their offsets per partition, in order. */
    private Map<Integer, List<Long>> acceptAll(String queue, String group, int count) {
        Map<Integer, List<Long>> offsets = new TreeMap<>();
        int received = 0;
        try (KafkaShareConsumer<String, String> consumer = shareConsumer(queue, group)) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (received < count) {
                assertThat(System.nanoTime() - deadline).as("time left; read " + offsets).isNegative();
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    offsets.computeIfAbsent(r.partition(), p -> new ArrayList<>()).add(r.offset());
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    received++;
                }
                consumer.commitSync();
            }
        }
        offsets.values().forEach(list -> list.sort(Long::compare));
        return offsets;
    }

    private DescribeConfigsResourceResult describeLimit(int brokerId, String group) throws Exception {
        DescribeConfigsResponse response = send(brokerId, new DescribeConfigsRequest.Builder(
                new DescribeConfigsRequestData().setResources(List.of(new DescribeConfigsRequestData
                        .DescribeConfigsResource().setResourceType(ConfigResource.Type.GROUP.id())
                        .setResourceName(group).setConfigurationKeys(List.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT))))),
                ApiKeys.DESCRIBE_CONFIGS.latestVersion());
        return response.data().results().get(0).configs().get(0);
    }

    /** Sends a request to one broker in particular (Admin picks brokers itself). */
    private <R extends org.apache.kafka.common.requests.AbstractResponse> R send(
            int brokerId, org.apache.kafka.common.requests.AbstractRequest.Builder<?> request, short version)
            throws Exception {
        java.net.InetSocketAddress address = cluster.broker(brokerId).boundAddress();
        BrokerChannel channel = BrokerChannel.connect(loop.next(), "127.0.0.1", address.getPort(), "test-admin",
                30_000).get(30, TimeUnit.SECONDS);
        try {
            return channel.<R>send(request, version).get(30, TimeUnit.SECONDS);
        } finally {
            channel.close();
        }
    }

    private List<Integer> createQueue(String queue) throws Exception {
        admin.createTopics(List.of(new NewTopic(queue, PARTITIONS, (short) 3))).all().get(30, TimeUnit.SECONDS);
        return awaitLeaders(queue);
    }

    /** The leader of each partition of {@code queue}, once every one has a leader. */
    private List<Integer> awaitLeaders(String queue) throws InterruptedException {
        List<Integer> leaders = new ArrayList<>();
        cluster.awaitCondition(() -> {
            try {
                TopicDescription d = admin.describeTopics(List.of(queue)).allTopicNames().get(10, TimeUnit.SECONDS)
                        .get(queue);
                leaders.clear();
                d.partitions().forEach(p -> leaders.add(p.leader() == null ? -1 : p.leader().id()));
                return !leaders.contains(-1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                return false;
            }
        }, "leaders of " + queue, Duration.ofSeconds(60));
        return leaders;
    }

    private void produce(String queue, String prefix) {
        try (KafkaProducer<String, String> producer = producer()) {
            for (int i = 0; i < PARTITIONS * PER_PARTITION; i++) {
                producer.send(new ProducerRecord<>(queue, i % PARTITIONS, null, prefix + "-" + i));
            }
            producer.flush();
        }
    }

    private KafkaProducer<String, String> producer() {
        return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap(),
                ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new StringSerializer());
    }

    private KafkaShareConsumer<String, String> shareConsumer(String queue, String group) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50);
        KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(config, new StringDeserializer(),
                new StringDeserializer());
        consumer.subscribe(List.of(queue));
        return consumer;
    }
}
