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
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.ResourceAdapterArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.jms.MillraceConnectionFactory;
import dev.millrace.ra.it.app.AppResources;
import dev.millrace.ra.it.app.ConcurrentMdb;
import dev.millrace.ra.it.app.DatabaseMdb;
import dev.millrace.ra.it.app.Forwarding;
import dev.millrace.ra.it.app.NoTransactionMdb;
import dev.millrace.ra.it.app.OrderMdb;
import dev.millrace.ra.it.app.OrdersTable;
import dev.millrace.ra.it.app.PoisonMdb;
import dev.millrace.ra.it.app.SelectorMdb;
import dev.millrace.ra.it.app.SenderBean;
import dev.millrace.ra.it.app.SharedTopicMdb;
import dev.millrace.ra.it.app.TestServlet;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;
import jakarta.jms.Topic;

/**
 * What the resource adapter must do in every Jakarta EE container, against a real Millrace broker in this JVM
 * ({@link MillraceBrokerExtension}): each container suite extends this with its own deployments (the .rar as Maven
 * built it, then {@link #APP_CLASSES} in a web archive named {@code millrace-it.war} whose {@code web.xml} maps the
 * container-neutral {@link AppResources} names to the server's resources, see {@link #appWar}) and hands over its
 * Arquillian {@link Deployer} and the application's URL. The unmanaged deployments: {@code topic-app}
 * ({@code DurableTopicMdb}), {@code load-app} ({@code LoadMdb}), {@code defined-app} ({@code millrace-defined-it.war}:
 * {@code DefinedResourcesBean}, {@code DefinedServlet} and {@code DefinedQueueMdb}), and {@code bad-type}, {@code bad-max} and
 * {@code bad-selector}, each one bean with a bad activation.
 */
abstract class ResourceAdapterScenarios {

    static final long WAIT_MS = 30_000;

    /** The beans and servlet of the main test application, deployed once for the whole suite. */
    static final Class<?>[] APP_CLASSES = {OrderMdb.class, PoisonMdb.class, ConcurrentMdb.class, SenderBean.class,
        TestServlet.class, DatabaseMdb.class, OrdersTable.class, Forwarding.class, SelectorMdb.class,
        NoTransactionMdb.class, SharedTopicMdb.class, AppResources.class};

    /** The deployer of the suite's unmanaged deployments. */
    protected abstract Deployer deployer();

    /** The root URL of {@code millrace-it.war}. */
    protected abstract URL appUrl();

    /** The .rar Maven built ({@code millrace.rar}), under the deployment name {@code millrace-ra.rar}. */
    static ResourceAdapterArchive builtRar() {
        File built = new File(System.getProperty("millrace.rar"));
        return ShrinkWrap.create(ResourceAdapterArchive.class, "millrace-ra.rar")
                .merge(ShrinkWrap.createFromZipFile(ResourceAdapterArchive.class, built));
    }

    /**
     * A web archive of {@code classes} whose {@code web.xml} maps each reference name of {@code lookups} (an
     * {@link AppResources} name) to the JNDI name the server bound the resource at.
     */
    static WebArchive appWar(String name, Map<String, String> lookups, Class<?>... classes) {
        StringBuilder xml = new StringBuilder("""
                <?xml version="1.0" encoding="UTF-8"?>
                <web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
                """);
        lookups.forEach((ref, lookup) -> xml.append("""
                    <resource-ref>
                        <res-ref-name>%s</res-ref-name>
                        <res-type>%s</res-type>
                        <lookup-name>%s</lookup-name>
                    </resource-ref>
                """.formatted(ref, ref.startsWith("jdbc/") ? "javax.sql.DataSource" : "jakarta.jms.ConnectionFactory",
                lookup)));
        xml.append("</web-app>\n");
        return ShrinkWrap.create(WebArchive.class, name).addClasses(classes)
                .setWebXML(new StringAsset(xml.toString()));
    }

    static JMSContext client() {
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
        deployer().deploy("topic-app");
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

            deployer().undeploy("topic-app");
            client.createProducer().send(prices, "while-undeployed");
            deployer().deploy("topic-app");
            assertThat(receiveUntil(done, "while-undeployed")).containsExactly("while-undeployed");
        } finally {
            deployer().undeploy("topic-app");
        }
    }

    @Test
    @Timeout(180)
    void shouldLoseNothingAndLeaveNoGroupMemberWhenMdbIsUndeployedUnderLoad() throws Exception {
        int count = 300;
        deployer().deploy("load-app");
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

            deployer().undeploy("load-app");
            assertThat(BrokerState.shareGroupMembers(admin, "millrace.queue.it.load")).as("members after the undeploy").isZero();

            deployer().deploy("load-app");
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
            assertThat(new HashSet<>(forwarded)).as("each message forwarded; " + BrokerState.describeMissing(client, forwarded))
                    .hasSize(count);
            assertThat(forwarded).as("no message forwarded twice").hasSize(count);
        } finally {
            deployer().undeploy("load-app");
        }
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

    /**
     * Deploying {@code deployment} fails, and what the server reports names {@code property}: by default in the
     * deployment's failure (the exception the deployer throws).
     */
    protected void assertDeploymentFails(String deployment, String property) {
        try {
            assertThatThrownBy(() -> deployer().deploy(deployment)).hasStackTraceContaining(property);
        } finally {
            try {
                deployer().undeploy(deployment);
            } catch (RuntimeException ignored) {
                // not deployed: nothing to remove
            }
        }
    }

    /** The bodies read from {@code queue} up to and including {@code marker}. */
    static List<String> receiveUntil(String queue, String marker) {
        try (JMSContext client = client()) {
            return receiveUntil(client.createConsumer(client.createQueue(queue)), marker);
        }
    }

    /** The bodies {@code consumer} reads up to and including {@code marker}. */
    static List<String> receiveUntil(JMSConsumer consumer, String marker) {
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

    /** GET {@code test/<path>?<query>} of the application's {@link TestServlet}; its body, once it answered 200. */
    @Test
    @Timeout(120)
    void shouldSendThroughFactoryAndQueueTheApplicationDefines() throws Exception {
        deployer().deploy("defined-app");
        try {
            URI uri = URI.create(appUrl().toExternalForm().replace("/millrace-it/", "/millrace-defined-it/")
                    + "defined/send?body=defined-1");
            HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(uri + " answered " + response.body()).isEqualTo(200);
            // received by DefinedQueueMdb, whose destinationLookup names the defined queue, and forwarded
            assertThat(receiveUntil("it.defined.done", "looked-up:defined-1")).containsExactly("looked-up:defined-1");
        } finally {
            deployer().undeploy("defined-app");
        }
    }

    String call(String path, String query) throws IOException, InterruptedException {
        URI uri = URI.create(appUrl().toExternalForm() + "test/" + path + (query.isEmpty() ? "" : "?" + query));
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(uri + " answered " + response.body()).isEqualTo(200);
        return response.body();
    }
}
