package dev.millrace.ra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.Set;

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

import dev.millrace.jms.MillraceConnectionFactory;
import dev.millrace.ra.it.app.BadDestinationTypeMdb;
import dev.millrace.ra.it.app.BadMaxSessionMdb;
import dev.millrace.ra.it.app.BadSelectorMdb;
import dev.millrace.ra.it.app.ConcurrentMdb;
import dev.millrace.ra.it.app.DatabaseMdb;
import dev.millrace.ra.it.app.DurableTopicMdb;
import dev.millrace.ra.it.app.Forwarding;
import dev.millrace.ra.it.app.LoadMdb;
import dev.millrace.ra.it.app.NoTransactionMdb;
import dev.millrace.ra.it.app.SelectorMdb;
import dev.millrace.ra.it.app.SharedTopicMdb;
import dev.millrace.ra.it.app.OrderMdb;
import dev.millrace.ra.it.app.OrdersTable;
import dev.millrace.ra.it.app.PoisonMdb;
import dev.millrace.ra.it.app.SenderBean;
import dev.millrace.ra.it.app.TestServlet;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;
import jakarta.jms.Topic;

/**
 * The resource adapter in a real WildFly ({@code standalone-full}, started by Arquillian) against a real Millrace
 * broker in this JVM ({@link MillraceBrokerExtension}): the .rar is deployed as Maven built it, then an application
 * with message-driven beans, a stateless bean that sends and a servlet to call it.
 */
@ExtendWith({MillraceBrokerExtension.class, ArquillianExtension.class})
@RunAsClient
class WildFlyResourceAdapterIT {

    private static final long WAIT_MS = 30_000;

    @ArquillianResource
    private Deployer deployer;

    @ArquillianResource
    @OperateOnDeployment("app")
    private URL app;

    @Deployment(name = "rar", order = 1, testable = false)
    static ResourceAdapterArchive rar() {
        File built = new File(System.getProperty("millrace.rar"));
        return ShrinkWrap.create(ResourceAdapterArchive.class, "millrace-ra.rar")
                .merge(ShrinkWrap.createFromZipFile(ResourceAdapterArchive.class, built));
    }

    @Deployment(name = "app", order = 2, testable = false)
    static WebArchive app() {
        return ShrinkWrap.create(WebArchive.class, "millrace-it.war")
                .addClasses(OrderMdb.class, PoisonMdb.class, ConcurrentMdb.class, SenderBean.class,
                        TestServlet.class, DatabaseMdb.class, OrdersTable.class, Forwarding.class,
                        SelectorMdb.class, NoTransactionMdb.class, SharedTopicMdb.class)
                .addAsWebInfResource("it/it-ds.xml", "it-ds.xml");
    }

    @Deployment(name = "bad-selector", managed = false, testable = false)
    static WebArchive badSelector() {
        return ShrinkWrap.create(WebArchive.class, "bad-selector.war").addClasses(BadSelectorMdb.class);
    }

    @Deployment(name = "load-app", managed = false, testable = false)
    static WebArchive loadApp() {
        return ShrinkWrap.create(WebArchive.class, "millrace-load-it.war").addClasses(LoadMdb.class,
                Forwarding.class);
    }

    @Deployment(name = "topic-app", managed = false, testable = false)
    static WebArchive topicApp() {
        return ShrinkWrap.create(WebArchive.class, "millrace-topic-it.war").addClasses(DurableTopicMdb.class);
    }

    @Deployment(name = "bad-type", managed = false, testable = false)
    static WebArchive badType() {
        return ShrinkWrap.create(WebArchive.class, "bad-type.war").addClasses(BadDestinationTypeMdb.class);
    }

    @Deployment(name = "bad-max", managed = false, testable = false)
    static WebArchive badMaxSession() {
        return ShrinkWrap.create(WebArchive.class, "bad-max.war").addClasses(BadMaxSessionMdb.class);
    }

    private static JMSContext client() {
        MillraceConnectionFactory factory = new MillraceConnectionFactory(MillraceBrokerExtension.bootstrap());
        factory.setRequestTimeoutMs(10_000);
        return factory.createContext();
    }

    @Test
    @Timeout(90)
    void shouldDeliverToMdbWhichForwardsInItsTransaction() {
        try (JMSContext client = client()) {
            JMSConsumer processed = client.createConsumer(client.createQueue("it.processed"));
            client.createProducer().send(client.createQueue("it.orders"), "order-1");
            assertThat(processed.receiveBody(String.class, WAIT_MS)).isEqualTo("processed:order-1");
        }
    }

    @Test
    @Timeout(90)
    void shouldMakeSendsVisibleOnceWhenContainerTransactionCommits() throws Exception {
        call("send", "queue=it.tx.commit&body=by-context&api=context");
        call("send", "queue=it.tx.commit&body=by-session&api=session");
        call("send", "queue=it.tx.commit&body=end&api=context");
        List<String> seen = receiveUntil("it.tx.commit", "end");
        assertThat(seen).containsExactly("by-context", "by-session", "end");
    }

    @Test
    @Timeout(90)
    void shouldMakeNothingVisibleWhenContainerTransactionRollsBack() throws Exception {
        call("send", "queue=it.tx.rollback&body=by-context&api=context&rollback=true");
        call("send", "queue=it.tx.rollback&body=by-session&api=session&rollback=true");
        call("send", "queue=it.tx.rollback&body=end&api=context");
        assertThat(receiveUntil("it.tx.rollback", "end")).containsExactly("end");
    }

    @Test
    @Timeout(120)
    void shouldRedeliverWhenMdbThrowsAndDeadLetterAfterMaxDeliveries() throws Exception {
        try (JMSContext client = client()) {
            JMSConsumer dlq = client.createConsumer(client.createQueue("it.poison.DLQ"));
            client.createProducer().send(client.createQueue("it.poison"), "poison-1");
            Message dead = dlq.receive(90_000);
            assertThat(dead).as("dead-lettered message").isNotNull();
            assertThat(dead.getBody(String.class)).isEqualTo("poison-1");
            assertThat(dead.getStringProperty("JMS_Millrace_DLQReason")).isEqualTo("delivery-count-limit");
            assertThat(dead.getIntProperty("JMS_Millrace_DLQDeliveryCount")).isEqualTo(3);
        }
        assertThat(call("poison-log", "").lines().toList())
                .containsExactly("poison-1:false:1", "poison-1:true:2", "poison-1:true:3");
    }

    @Test
    @Timeout(90)
    void shouldDeliverConcurrentlyWithMaxSessionAboveOneAndNoMessageTwice() {
        try (JMSContext client = client()) {
            JMSConsumer done = client.createConsumer(client.createQueue("it.concurrent.done"));
            for (int i = 0; i < 8; i++) {
                client.createProducer().send(client.createQueue("it.concurrent"), "c" + i);
            }
            Set<String> bodies = new HashSet<>();
            long deadline = System.currentTimeMillis() + 60_000;
            while (bodies.size() < 8 && System.currentTimeMillis() < deadline) {
                String body = done.receiveBody(String.class, Math.max(1, deadline - System.currentTimeMillis()));
                if (body != null) {
                    assertThat(bodies.add(body)).as("delivered once: " + body).isTrue();
                }
            }
            assertThat(bodies).containsExactlyInAnyOrder("c0:true", "c1:true", "c2:true", "c3:true", "c4:true",
                    "c5:true", "c6:true", "c7:true");
            assertThat(done.receiveBody(String.class, 1000)).as("nothing more").isNull();
        }
    }

    @Test
    @Timeout(90)
    void shouldDeliverOnlySelectedMessagesAndLeaveTheOthersOnTheQueue() {
        try (JMSContext client = client()) {
            JMSConsumer done = client.createConsumer(client.createQueue("it.selected.done"));
            client.createProducer().setProperty("kind", "unwanted").send(client.createQueue("it.selected"), "u1");
            client.createProducer().setProperty("kind", "wanted").send(client.createQueue("it.selected"), "w1");
            client.createProducer().setProperty("kind", "wanted").send(client.createQueue("it.selected"), "w2");
            assertThat(receiveUntil(done, "w2")).containsExactly("w1", "w2");
        }
        assertThat(receiveUntil("it.selected", "u1")).containsExactly("u1");
    }

    @Test
    @Timeout(90)
    void shouldDeliverAgainWhenMdbWithoutTransactionThrows() {
        try (JMSContext client = client()) {
            JMSConsumer done = client.createConsumer(client.createQueue("it.notx.done"));
            client.createProducer().send(client.createQueue("it.notx"), "n1");
            assertThat(done.receiveBody(String.class, WAIT_MS)).isEqualTo("n1:true");
        }
    }

    @Test
    @Timeout(120)
    void shouldShareTopicSubscriptionAmongSessionsWithEachMessageOnce() {
        try (JMSContext client = client()) {
            JMSConsumer done = client.createConsumer(client.createQueue("it.news.done"));
            Topic news = client.createTopic("it.news");
            String first = null;
            long deadline = System.currentTimeMillis() + 60_000;
            for (int i = 0; first == null && System.currentTimeMillis() < deadline; i++) {
                client.createProducer().send(news, "warm-up-" + i);
                first = done.receiveBody(String.class, 1000);
            }
            assertThat(first).as("a warm-up message through the subscription").startsWith("warm-up-");
            for (int i = 0; i < 6; i++) {
                client.createProducer().send(news, "news-" + i);
            }
            List<String> got = new ArrayList<>();
            long end = System.currentTimeMillis() + WAIT_MS;
            while (got.stream().filter(b -> b.startsWith("news-")).count() < 6 && System.currentTimeMillis() < end) {
                String body = done.receiveBody(String.class, Math.max(1, end - System.currentTimeMillis()));
                if (body != null) {
                    got.add(body);
                }
            }
            assertThat(got.stream().filter(b -> b.startsWith("news-")))
                    .containsExactlyInAnyOrder("news-0", "news-1", "news-2", "news-3", "news-4", "news-5");
            String late = done.receiveBody(String.class, 1000);
            assertThat(late == null || late.startsWith("warm-up-")).as("nothing more but warm-ups: " + late).isTrue();
        }
    }

    @Test
    @Timeout(120)
    void shouldWriteRowAndConsumeMessageInOneXaTransactionAndRollBackBoth() throws Exception {
        try (JMSContext client = client()) {
            JMSConsumer dlq = client.createConsumer(client.createQueue("it.db.DLQ"));
            client.createProducer().send(client.createQueue("it.db"), "fail-1");
            client.createProducer().send(client.createQueue("it.db"), "row-1");
            Message dead = dlq.receive(90_000);
            assertThat(dead).as("dead-lettered message").isNotNull();
            assertThat(dead.getBody(String.class)).isEqualTo("fail-1");
        }
        List<String> rows = List.of();
        long deadline = System.currentTimeMillis() + WAIT_MS;
        while (!rows.contains("row-1") && System.currentTimeMillis() < deadline) {
            String body = call("rows", "");
            rows = body.isEmpty() ? List.of() : body.lines().toList();
        }
        assertThat(rows).as("rows written").containsExactly("row-1");
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

    @Test
    @Timeout(60)
    void shouldFailDeploymentNamingDestinationTypeWhenItIsUnknown() {
        assertDeploymentFails("bad-type", "destinationType");
    }

    @Test
    @Timeout(60)
    void shouldFailDeploymentNamingMaxSessionWhenItIsNegative() {
        assertDeploymentFails("bad-max", "maxSession");
    }

    @Test
    @Timeout(60)
    void shouldFailDeploymentNamingMessageSelectorWhenItDoesNotCompile() {
        assertDeploymentFails("bad-selector", "messageSelector");
    }

    private void assertDeploymentFails(String deployment, String property) {
        try {
            assertThatThrownBy(() -> deployer.deploy(deployment)).hasStackTraceContaining(property);
        } finally {
            try {
                deployer.undeploy(deployment);
            } catch (RuntimeException ignored) {
                // not deployed: nothing to remove
            }
        }
    }

    /** The bodies read from {@code queue} up to and including {@code marker}. */
    private static List<String> receiveUntil(String queue, String marker) {
        try (JMSContext client = client()) {
            return receiveUntil(client.createConsumer(client.createQueue(queue)), marker);
        }
    }

    /** The bodies {@code consumer} reads up to and including {@code marker}. */
    private static List<String> receiveUntil(JMSConsumer consumer, String marker) {
        List<String> bodies = new ArrayList<>();
        long deadline = System.currentTimeMillis() + WAIT_MS;
        while (!bodies.contains(marker) && System.currentTimeMillis() < deadline) {
            String body = consumer.receiveBody(String.class, Math.max(1, deadline - System.currentTimeMillis()));
            if (body != null) {
                bodies.add(body);
            }
        }
        assertThat(bodies).as("received up to " + marker).contains(marker);
        return bodies;
    }

    private String call(String path, String query) throws IOException, InterruptedException {
        URI uri = URI.create(app.toExternalForm() + "test/" + path + (query.isEmpty() ? "" : "?" + query));
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(uri + " answered " + response.body()).isEqualTo(200);
        return response.body();
    }

}
