package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.protocol.jms.JmsHeaders;
import dev.millrace.protocol.jms.TypedValueCodec;
import dev.millrace.protocol.selector.MemberSelector;

/**
 * Member selectors on a three-broker cluster: a queue of three partitions, each led by another broker, so that at
 * least two of them are led by brokers that do not coordinate the share group (the coordinator is the leader of the
 * group's {@code __consumer_offsets} partition). A real {@code KafkaShareConsumer} whose {@code client.rack} carries
 * a selector gets only the records it matches from every partition (the leaders ask the coordinator for its selector,
 * ShareMember extension); the records it does not match stay available, never counted as deliveries, to a member
 * without a selector; also after the group's coordinator stopped and the group moved to another broker.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ShareSelectorClusterIntegrationTest {

    private static final String QUEUE = "orders";
    private static final String GROUP = "selective";
    private static final int PARTITIONS = 3;
    private static final int PER_COLOR = 10;

    @TempDir
    Path dir;

    private InProcessCluster cluster;
    private Admin admin;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void startCluster() throws Exception {
        cluster = InProcessCluster.start(dir, 3, Map.of("offsets.topic.num.partitions", "3",
                "group.share.auto.offset.reset", "earliest"));
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()));
    }

    @AfterEach
    void stopCluster() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void shouldHandASelectiveMemberOnlyMatchingRecordsFromLeadersThatDoNotCoordinateItsGroup() throws Exception {
        List<Integer> leaders = createQueue();
        int coordinator = leaderOf("__consumer_offsets", Utils.abs(GROUP.hashCode()) % 3);
        assertThat(leaders.stream().filter(l -> l != coordinator).count())
                .as("queue partitions led by a broker that is not the group's coordinator (node %d)", coordinator)
                .isGreaterThanOrEqualTo(2);
        produce(0);

        KafkaShareConsumer<String, String> red = consumer(MemberSelector.encode("color = 'red'"));
        Set<String> reds = new HashSet<>();
        while (reds.size() < PARTITIONS * PER_COLOR) {
            for (String value : accept(red)) {
                assertThat(value).as("the selective member gets only red records").startsWith("red-");
                assertThat(reds.add(value)).as(value + " once").isTrue();
            }
        }
        assertThat(reds).isEqualTo(expected("red-", 0));
        // more records of both colors: the red member, now known to every leader, still gets only red ones
        produce(1);
        Set<String> moreReds = new HashSet<>();
        while (moreReds.size() < PARTITIONS * PER_COLOR) {
            for (String value : accept(red)) {
                assertThat(value).as("the selective member gets only red records").startsWith("red-");
                assertThat(moreReds.add(value)).as(value + " once").isTrue();
            }
        }
        assertThat(moreReds).isEqualTo(expected("red-", 1));

        KafkaShareConsumer<String, String> any = consumer(null);
        Set<String> blues = new HashSet<>();
        while (blues.size() < 2 * PARTITIONS * PER_COLOR) {
            for (ConsumerRecord<String, String> r : any.poll(Duration.ofMillis(100))) {
                assertThat(r.value()).as("only blue records were left").startsWith("blue-");
                assertThat(r.deliveryCount()).as("passed over by the red member, never delivered: " + r.value())
                        .contains((short) 1);
                assertThat(blues.add(r.value())).as(r.value() + " once").isTrue();
                any.acknowledge(r, AcknowledgeType.ACCEPT);
            }
            any.commitSync();
        }
        Set<String> allBlues = new HashSet<>(expected("blue-", 0));
        allBlues.addAll(expected("blue-", 1));
        assertThat(blues).isEqualTo(allBlues);
    }

    @Test
    void shouldKeepApplyingTheSelectorWhenTheGroupsCoordinatorStops() throws Exception {
        List<Integer> leaders = createQueue();
        int coordinator = leaderOf("__consumer_offsets", Utils.abs(GROUP.hashCode()) % 3);
        produce(0);
        KafkaShareConsumer<String, String> red = consumer(MemberSelector.encode("color = 'red'"));
        Set<String> reds = new HashSet<>();
        while (reds.size() < PARTITIONS * PER_COLOR) {
            for (String value : accept(red)) {
                assertThat(value).as("the selective member gets only red records").startsWith("red-");
                reds.add(value);
            }
        }

        // the coordinator (also the leader of a queue partition) stops: the group and that partition move; the member
        // rejoins at the new coordinator, with the same rack id, and the new leader asks the new coordinator
        cluster.stop(coordinator);
        cluster.awaitCondition(() -> {
            try {
                int now = leaderOf("__consumer_offsets", Utils.abs(GROUP.hashCode()) % 3);
                return now > 0 && now != coordinator && !leadersOf().contains(coordinator)
                        && !leadersOf().contains(-1);
            } catch (Exception e) {
                return false;
            }
        }, "the coordinator and the queue partition it led moved", Duration.ofSeconds(60));
        assertThat(leaders).contains(coordinator);
        produce(1);
        Set<String> moreReds = new HashSet<>();
        while (!moreReds.containsAll(expected("red-", 1))) {
            for (String value : accept(red)) {
                assertThat(value).as("the selective member gets only red records").startsWith("red-");
                moreReds.add(value);
            }
        }

        KafkaShareConsumer<String, String> any = consumer(null);
        Set<String> blues = new HashSet<>();
        Set<String> allBlues = new HashSet<>(expected("blue-", 0));
        allBlues.addAll(expected("blue-", 1));
        while (!blues.containsAll(allBlues)) {
            for (ConsumerRecord<String, String> r : any.poll(Duration.ofMillis(100))) {
                assertThat(r.value()).as("only blue records were left").startsWith("blue-");
                blues.add(r.value());
                any.acknowledge(r, AcknowledgeType.ACCEPT);
            }
            any.commitSync();
        }
    }

    private List<Integer> leadersOf() throws Exception {
        List<Integer> leaders = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            leaders.add(leaderOf(QUEUE, p));
        }
        return leaders;
    }

    /** One poll of {@code consumer}, every record accepted; the values. */
    private static List<String> accept(KafkaShareConsumer<String, String> consumer) {
        List<String> values = new ArrayList<>();
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
            values.add(r.value());
            consumer.acknowledge(r, AcknowledgeType.ACCEPT);
        }
        consumer.commitSync();
        return values;
    }

    private static Set<String> expected(String color, int round) {
        Set<String> out = new HashSet<>();
        for (int p = 0; p < PARTITIONS; p++) {
            for (int i = 0; i < PER_COLOR; i++) {
                out.add(color + round + "-" + p + "-" + i);
            }
        }
        return out;
    }

    /** {@link #PER_COLOR} red and blue records, interleaved, to every partition; values name color, round, place. */
    private void produce(int round) {
        Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap(),
                ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            for (int p = 0; p < PARTITIONS; p++) {
                for (int i = 0; i < PER_COLOR; i++) {
                    for (String color : List.of("blue", "red")) {
                        ProducerRecord<String, String> record = new ProducerRecord<>(QUEUE, p, null,
                                color + "-" + round + "-" + p + "-" + i);
                        record.headers().add(new RecordHeader(JmsHeaders.propertyKey("color"),
                                TypedValueCodec.encodeProperty(color)));
                        producer.send(record);
                    }
                }
            }
            producer.flush();
        }
    }

    private KafkaShareConsumer<String, String> consumer(String rack) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        config.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        if (rack != null) {
            config.put(ConsumerConfig.CLIENT_RACK_CONFIG, rack);
        }
        KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(config, new StringDeserializer(),
                new StringDeserializer());
        closeables.add(() -> consumer.close(Duration.ofSeconds(1)));
        consumer.subscribe(List.of(QUEUE));
        return consumer;
    }

    /** The queue, three partitions replicated three times, one led by each broker; its leaders by partition. */
    private List<Integer> createQueue() throws Exception {
        admin.createTopics(List.of(new NewTopic(QUEUE, PARTITIONS, (short) 3))).all().get(30, TimeUnit.SECONDS);
        List<Integer> leaders = new ArrayList<>();
        cluster.awaitCondition(() -> {
            try {
                leaders.clear();
                for (int p = 0; p < PARTITIONS; p++) {
                    leaders.add(leaderOf(QUEUE, p));
                }
                return !leaders.contains(-1) && new HashSet<>(leaders).size() == PARTITIONS;
            } catch (Exception e) {
                return false;
            }
        }, "a leader on each broker for the queue's partitions", Duration.ofSeconds(30));
        return leaders;
    }

    private int leaderOf(String topic, int partition) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
        TopicPartitionInfo info = d.partitions().stream().filter(i -> i.partition() == partition).findFirst()
                .orElseThrow();
        return info.leader() == null ? -1 : info.leader().id();
    }
}
