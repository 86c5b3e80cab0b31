package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ACL matrix with real kafka-clients over SASL_PLAINTEXT (PLAIN users admin, alice, bob) against a broker with
 * the authorizer on and {@code super.users=User:admin}: with the ACL an operation succeeds, without it the client
 * gets Kafka's authorization error, a DENY beats an ALLOW, PREFIXED ACLs match, the super user needs none.
 */
@Timeout(120)
class AclAuthorizationIntegrationTest {

    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required "
            + "user_admin=\"admin-secret\" user_alice=\"alice-secret\" user_bob=\"bob-secret\";";

    @TempDir
    static Path tmp;

    private static BrokerServer broker;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBrokers.start(tmp.resolve("data"), Map.of(
                "listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
                "sasl.enabled.mechanisms", "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS,
                "authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "super.users", "User:admin;User:CN=nobody",
                "group.share.auto.offset.reset", "earliest"));
        try (Admin admin = Admin.create(client("admin"))) {
            admin.createTopics(List.of(new NewTopic("orders-1", 1, (short) 1), new NewTopic("orders-secret", 1,
                    (short) 1), new NewTopic("other", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            admin.createAcls(List.of(
                    acl(ResourceType.TOPIC, "orders-", PatternType.PREFIXED, "alice", AclOperation.WRITE,
                            AclPermissionType.ALLOW),
                    acl(ResourceType.TOPIC, "orders-secret", PatternType.LITERAL, "alice", AclOperation.WRITE,
                            AclPermissionType.DENY),
                    acl(ResourceType.TOPIC, "orders-1", PatternType.LITERAL, "alice", AclOperation.READ,
                            AclPermissionType.ALLOW),
                    acl(ResourceType.TOPIC, "orders-1", PatternType.LITERAL, "bob", AclOperation.READ,
                            AclPermissionType.ALLOW),
                    acl(ResourceType.GROUP, "alice-", PatternType.PREFIXED, "alice", AclOperation.READ,
                            AclPermissionType.ALLOW),
                    acl(ResourceType.GROUP, "alice-denied", PatternType.LITERAL, "alice", AclOperation.READ,
                            AclPermissionType.DENY))).all().get(30, TimeUnit.SECONDS);
        }
    }

    @AfterAll
    static void stopBroker() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void shouldProduceWithAPrefixedWriteAclAndRefuseWithoutOrWhenDenied() throws Exception {
        try (KafkaProducer<String, String> alice = producer("alice", null)) {
            alice.send(new ProducerRecord<>("orders-1", "k", "v")).get(30, TimeUnit.SECONDS);
            assertThatThrownBy(() -> alice.send(new ProducerRecord<>("orders-secret", "k", "v"))
                    .get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(TopicAuthorizationException.class);
            assertThatThrownBy(() -> alice.send(new ProducerRecord<>("other", "k", "v")).get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(TopicAuthorizationException.class);
        }
        try (KafkaProducer<String, String> bob = producer("bob", null)) {
            assertThatThrownBy(() -> bob.send(new ProducerRecord<>("orders-secret", "k", "v"))
                    .get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(TopicAuthorizationException.class);
        }
        try (KafkaProducer<String, String> admin = producer("admin", null)) {
            admin.send(new ProducerRecord<>("other", "k", "v")).get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldConsumeInAGroupOnlyWithReadOnTheGroup() throws Exception {
        try (KafkaProducer<String, String> admin = producer("admin", null)) {
            admin.send(new ProducerRecord<>("orders-1", "k", "for-alice")).get(30, TimeUnit.SECONDS);
        }
        try (KafkaConsumer<String, String> alice = consumer("alice", "alice-group")) {
            alice.subscribe(List.of("orders-1"));
            List<String> values = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!values.contains("for-alice") && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : alice.poll(Duration.ofMillis(200))) {
                    values.add(record.value());
                }
            }
            assertThat(values).contains("for-alice");
        }
        try (KafkaConsumer<String, String> bob = consumer("bob", "bob-group")) {
            bob.subscribe(List.of("orders-1"));
            assertThatThrownBy(() -> bob.poll(Duration.ofSeconds(30)))
                    .isInstanceOf(GroupAuthorizationException.class);
        }
    }

    @Test
    void shouldCreateTopicsOnlyWithCreateAndManageAclsOnlyAsSuperUser() throws Exception {
        try (Admin bob = Admin.create(client("bob"))) {
            assertThatThrownBy(() -> bob.createTopics(List.of(new NewTopic("bobs", 1, (short) 1))).all()
                    .get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(TopicAuthorizationException.class);
            assertThatThrownBy(() -> bob.createAcls(List.of(acl(ResourceType.TOPIC, "bobs", PatternType.LITERAL,
                    "bob", AclOperation.ALL, AclPermissionType.ALLOW))).all().get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(ClusterAuthorizationException.class);
        }
        AclBinding bobCreates = acl(ResourceType.TOPIC, "bobs-", PatternType.PREFIXED, "bob", AclOperation.CREATE,
                AclPermissionType.ALLOW);
        try (Admin admin = Admin.create(client("admin"))) {
            admin.createAcls(List.of(bobCreates)).all().get(30, TimeUnit.SECONDS);
            assertThat(admin.describeAcls(AclBindingFilter.ANY).values().get(30, TimeUnit.SECONDS))
                    .contains(bobCreates);
        }
        try (Admin bob = Admin.create(client("bob"))) {
            bob.createTopics(List.of(new NewTopic("bobs-1", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (Admin admin = Admin.create(client("admin"))) {
            assertThat(admin.deleteAcls(List.of(bobCreates.toFilter())).all().get(30, TimeUnit.SECONDS))
                    .containsExactly(bobCreates);
            assertThat(admin.describeAcls(bobCreates.toFilter()).values().get(30, TimeUnit.SECONDS)).isEmpty();
        }
    }

    @Test
    void shouldShareConsumeOnlyWithReadOnTheShareGroupAndADenyBeatsThePrefixedAllow() throws Exception {
        try (KafkaProducer<String, String> admin = producer("admin", null)) {
            admin.send(new ProducerRecord<>("orders-1", "k", "shared")).get(30, TimeUnit.SECONDS);
        }
        try (KafkaShareConsumer<String, String> alice = shareConsumer("alice", "alice-share")) {
            alice.subscribe(List.of("orders-1"));
            List<String> values = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!values.contains("shared") && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : alice.poll(Duration.ofMillis(200))) {
                    values.add(record.value());
                }
            }
            assertThat(values).contains("shared");
        }
        try (KafkaShareConsumer<String, String> alice = shareConsumer("alice", "alice-denied")) {
            alice.subscribe(List.of("orders-1"));
            // the share consumer reports the refused heartbeat when the poll ends
            assertThatThrownBy(() -> alice.poll(Duration.ofSeconds(5)))
                    .isInstanceOf(GroupAuthorizationException.class);
        }
    }

    @Test
    void shouldLeaveABrokerWithoutAuthorizerOpenWhateverTheAcls() throws Exception {
        BrokerServer open = TestBrokers.start(tmp.resolve("open"), Map.of());
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                TestBrokers.bootstrap(open)))) {
            admin.createAcls(List.of(acl(ResourceType.TOPIC, "closed", PatternType.LITERAL, "ANONYMOUS",
                    AclOperation.ALL, AclPermissionType.DENY))).all().get(30, TimeUnit.SECONDS);
            admin.createTopics(List.of(new NewTopic("closed", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            assertThat(admin.describeAcls(AclBindingFilter.ANY).values().get(30, TimeUnit.SECONDS)).hasSize(1);
        } finally {
            open.close();
        }
    }

    @Test
    void shouldRefuseAFetchWithoutReadOnTheTopic() {
        // alice may describe orders-secret (her prefixed WRITE implies DESCRIBE) but not read it
        try (KafkaConsumer<String, String> alice = consumer("alice", "alice-unused")) {
            alice.assign(List.of(new TopicPartition("orders-secret", 0)));
            alice.seekToBeginning(List.of(new TopicPartition("orders-secret", 0)));
            assertThatThrownBy(() -> alice.poll(Duration.ofSeconds(30)))
                    .isInstanceOf(TopicAuthorizationException.class).hasMessageContaining("orders-secret");
        }
    }

    @Test
    void shouldRefuseATransactionalIdWithoutWrite() {
        try (KafkaProducer<String, String> bob = producer("bob", "bob-tx")) {
            assertThatThrownBy(bob::initTransactions).isInstanceOf(TransactionalIdAuthorizationException.class);
        }
    }

    private static AclBinding acl(ResourceType type, String name, PatternType pattern, String user,
                                  AclOperation operation, AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
                new AccessControlEntry("User:" + user, "*", operation, permission));
    }

    private static Properties client(String user) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                "127.0.0.1:" + broker.boundAddress("SASL_PLAINTEXT").getPort());
        props.put("security.protocol", "SASL_PLAINTEXT");
        props.put("sasl.mechanism", "PLAIN");
        props.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
                + user + "\" password=\"" + user + "-secret\";");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        return props;
    }

    private static KafkaProducer<String, String> producer(String user, String transactionalId) {
        Properties props = client(user);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        if (transactionalId != null) {
            props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        }
        return new KafkaProducer<>(props);
    }

    private static KafkaShareConsumer<String, String> shareConsumer(String user, String groupId) {
        Properties props = client(user);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return new KafkaShareConsumer<>(props);
    }

    private static KafkaConsumer<String, String> consumer(String user, String groupId) {
        Properties props = client(user);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return new KafkaConsumer<>(props);
    }
}
