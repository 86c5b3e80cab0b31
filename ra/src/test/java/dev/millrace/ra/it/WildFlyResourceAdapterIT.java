package dev.millrace.ra.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URL;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.OperateOnDeployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.ResourceAdapterArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.millrace.ra.it.app.AppResources;
import dev.millrace.ra.it.app.BadDestinationTypeMdb;
import dev.millrace.ra.it.app.BadMaxSessionMdb;
import dev.millrace.ra.it.app.BadSelectorMdb;
import dev.millrace.ra.it.app.DurableTopicMdb;
import dev.millrace.ra.it.app.Forwarding;
import dev.millrace.ra.it.app.LoadMdb;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;
import jakarta.jms.Topic;

/**
 * The resource adapter in a real WildFly ({@code standalone-full}, started by Arquillian) against a real Millrace
 * broker in this JVM ({@link MillraceBrokerExtension}): the .rar is deployed as Maven built it, then an application
 * with message-driven beans, a stateless bean that sends and a servlet to call it. Every MDB binds to the adapter
 * (the server's default, {@code -Dejb.resource-adapter-name=millrace-ra.rar}); the connection factory is the one of
 * the .rar's {@code ironjacamar.xml}, the XA data source WildFly's H2 ({@code it/it-ds.xml}). Beside the scenarios
 * every container runs ({@link ResourceAdapterScenarios}): a durable subscription across an undeploy, and an
 * undeploy and redeploy under load.
 */
@ExtendWith({MillraceBrokerExtension.class, ArquillianExtension.class})
@RunAsClient
class WildFlyResourceAdapterIT extends ResourceAdapterScenarios {

    private static final Map<String, String> LOOKUPS = Map.of(
            AppResources.CONNECTION_FACTORY, "java:/jms/millrace/ConnectionFactory",
            AppResources.DATA_SOURCE, "java:jboss/datasources/MillraceItXA");

    private static final Map<String, String> FACTORY_ONLY = Map.of(
            AppResources.CONNECTION_FACTORY, "java:/jms/millrace/ConnectionFactory");

    @ArquillianResource
    private Deployer deployer;

    @ArquillianResource
    @OperateOnDeployment("app")
    private URL app;

    @Override
    protected Deployer deployer() {
        return deployer;
    }

    @Override
    protected URL appUrl() {
        return app;
    }

    @Deployment(name = "rar", order = 1, testable = false)
    static ResourceAdapterArchive rar() {
        return builtRar();
    }

    @Deployment(name = "app", order = 2, testable = false)
    static WebArchive app() {
        return appWar("millrace-it.war", LOOKUPS, APP_CLASSES).addAsWebInfResource("it/it-ds.xml", "it-ds.xml");
    }

    @Deployment(name = "bad-selector", managed = false, testable = false)
    static WebArchive badSelector() {
        return ShrinkWrap.create(WebArchive.class, "bad-selector.war").addClasses(BadSelectorMdb.class);
    }

    @Deployment(name = "load-app", managed = false, testable = false)
    static WebArchive loadApp() {
        return appWar("millrace-load-it.war", FACTORY_ONLY, LoadMdb.class, Forwarding.class, AppResources.class);
    }

    @Deployment(name = "topic-app", managed = false, testable = false)
    static WebArchive topicApp() {
        return appWar("millrace-topic-it.war", FACTORY_ONLY, DurableTopicMdb.class, AppResources.class);
    }

    @Deployment(name = "bad-type", managed = false, testable = false)
    static WebArchive badType() {
        return ShrinkWrap.create(WebArchive.class, "bad-type.war").addClasses(BadDestinationTypeMdb.class);
    }

    @Deployment(name = "bad-max", managed = false, testable = false)
    static WebArchive badMaxSession() {
        return ShrinkWrap.create(WebArchive.class, "bad-max.war").addClasses(BadMaxSessionMdb.class);
    }

    @Test
    @Timeout(180)
    void shouldKeepMessagesOfDurableSubscriptionWhileMdbIsUndeployed() {
        deployer.deploy("topic-app");
        try (JMSContext client = client()) {
            JMSConsumer done = client.createConsumer(client.createQueue("it.prices.done"));
            Topic prices = client.createTopic("it.prices");
            // the subscription exists once a message sent to the topic comes through
            String first = null;
            long deadline = System.currentTimeMillis() + 60_000;
            for (int i = 0; first == null && System.currentTimeMillis() < deadline; i++) {
                client.createProducer().send(prices, "warm-up-" + i);
                first = done.receiveBody(String.class, 1000);
            }
            assertThat(first).as("a warm-up message through the subscription").startsWith("warm-up-");
            client.createProducer().send(prices, "deployed");
            assertThat(receiveUntil(done, "deployed")).last().isEqualTo("deployed");

            deployer.undeploy("topic-app");
            client.createProducer().send(prices, "while-undeployed");
            deployer.deploy("topic-app");
            assertThat(receiveUntil(done, "while-undeployed")).containsExactly("while-undeployed");
        } finally {
            deployer.undeploy("topic-app");
        }
    }

    @Test
    @Timeout(180)
    void shouldLoseNothingAndLeaveNoGroupMemberWhenMdbIsUndeployedUnderLoad() throws Exception {
        int count = 300;
        deployer.deploy("load-app");
        try (JMSContext client = client(); Admin admin = Admin.create(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, MillraceBrokerExtension.bootstrap()))) {
            JMSConsumer done = client.createConsumer(client.createQueue("it.load.done"));
            for (int i = 0; i < count; i++) {
                client.createProducer().send(client.createQueue("it.load"), "load-" + i);
            }
            List<String> forwarded = new ArrayList<>();
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (forwarded.size() < count / 10 && System.currentTimeMillis() < deadline) {
                String body = done.receiveBody(String.class, Math.max(1, deadline - System.currentTimeMillis()));
                if (body != null) {
                    forwarded.add(body);
                }
            }
            assertThat(forwarded).as("forwarded before the undeploy").hasSizeGreaterThanOrEqualTo(count / 10);

            deployer.undeploy("load-app");
            assertThat(shareGroupMembers(admin, "millrace.queue.it.load")).as("members after the undeploy").isZero();

            deployer.deploy("load-app");
            deadline = System.currentTimeMillis() + 90_000;
            while (new HashSet<>(forwarded).size() < count && System.currentTimeMillis() < deadline) {
                String body = done.receiveBody(String.class, Math.max(1, deadline - System.currentTimeMillis()));
                if (body != null) {
                    forwarded.add(body);
                }
            }
            String late = done.receiveBody(String.class, 1000);
            if (late != null) {
                forwarded.add(late);
            }
            assertThat(new HashSet<>(forwarded)).as("each message forwarded; " + diagnose(client, forwarded))
                    .hasSize(count);
            assertThat(forwarded).as("no message forwarded twice").hasSize(count);
        } finally {
            deployer.undeploy("load-app");
        }
    }

    /** What became of the messages missing from {@code forwarded}: still on the queue, or in the forwarded log. */
    private static String diagnose(JMSContext client, List<String> forwarded) {
        Set<String> missing = new java.util.TreeSet<>();
        for (int i = 0; i < 300; i++) {
            if (!forwarded.contains("load-" + i)) {
                missing.add("load-" + i);
            }
        }
        List<String> onQueue = new ArrayList<>();
        try {
            var browser = client.createBrowser(client.createQueue("it.load"));
            var e = browser.getEnumeration();
            while (e.hasMoreElements()) {
                onQueue.add(((Message) e.nextElement()).getBody(String.class));
            }
        } catch (Exception ex) {
            onQueue.add("browse failed: " + ex);
        }
        List<String> inLog = new ArrayList<>();
        try (var consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]>(Map.of(
                "bootstrap.servers", MillraceBrokerExtension.bootstrap(), "isolation.level", "read_committed",
                "key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer",
                "value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer"))) {
            var tp = new org.apache.kafka.common.TopicPartition("it.load.done", 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.currentTimeMillis() + 10_000;
            while (consumer.position(tp) < end && System.currentTimeMillis() < deadline) {
                for (var r : consumer.poll(java.time.Duration.ofMillis(500))) {
                    String body = new String(r.value(), java.nio.charset.StandardCharsets.UTF_8);
                    if (missing.contains(body)) {
                        inLog.add(r.offset() + ":" + body);
                    }
                }
            }
        }
        return "missing " + missing + ", still on it.load: " + onQueue + ", in it.load.done's log: " + inLog
                + ", received " + forwarded.size();
    }

    private static int shareGroupMembers(Admin admin, String group) throws Exception {
        ShareGroupDescription d = admin.describeShareGroups(List.of(group)).all().get(10, TimeUnit.SECONDS)
                .get(group);
        return d.members().size();
    }
}
