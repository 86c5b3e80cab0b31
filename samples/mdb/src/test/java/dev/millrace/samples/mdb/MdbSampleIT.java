package dev.millrace.samples.mdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.OperateOnDeployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.ResourceAdapterArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.millrace.jms.MillraceConnectionFactory;
import dev.millrace.samples.mdb.bad.UnknownQueueMdb;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;

/**
 * The sample as a user deploys it, in a real WildFly ({@code standalone-full}, started by Arquillian): the Millrace
 * .rar as Maven built it with the sample's {@code ironjacamar.xml} (its queues as administered objects), then the
 * sample's war as Maven built it. The broker runs in this JVM ({@link SampleBrokerExtension}); the test places orders
 * over HTTP and reads the confirmations and the dead-letter queue with its own Millrace client.
 */
@ExtendWith({SampleBrokerExtension.class, ArquillianExtension.class})
@RunAsClient
class MdbSampleIT {

    private static final long WAIT_MS = 60_000;

    @ArquillianResource
    private Deployer deployer;

    @ArquillianResource
    @OperateOnDeployment("app")
    private URL app;

    @Deployment(name = "rar", order = 1, testable = false)
    static ResourceAdapterArchive rar() {
        ResourceAdapterArchive rar = ShrinkWrap.create(ResourceAdapterArchive.class, "millrace-ra.rar")
                .merge(ShrinkWrap.createFromZipFile(ResourceAdapterArchive.class,
                        new File(System.getProperty("millrace.rar"))));
        rar.delete("META-INF/ironjacamar.xml");
        return rar.addAsManifestResource(new File(System.getProperty("millrace.sample.ironjacamar")),
                "ironjacamar.xml");
    }

    @Deployment(name = "app", order = 2, testable = false)
    static WebArchive app() {
        return ShrinkWrap.createFromZipFile(WebArchive.class, new File(System.getProperty("millrace.sample.war")));
    }

    @Deployment(name = "unknown-queue", managed = false, testable = false)
    static WebArchive unknownQueue() {
        return ShrinkWrap.create(WebArchive.class, "unknown-queue.war").addClass(UnknownQueueMdb.class)
                .addAsWebInfResource(new StringAsset("""
                        <jboss:ejb-jar xmlns:jboss="http://www.jboss.com/xml/ns/javaee"
                                       xmlns="http://java.sun.com/xml/ns/javaee"
                                       xmlns:mdb="urn:resource-adapter-binding" version="3.1" impl-version="2.0">
                            <assembly-descriptor>
                                <mdb:resource-adapter-binding>
                                    <ejb-name>UnknownQueueMdb</ejb-name>
                                    <mdb:resource-adapter-name>millrace-ra.rar</mdb:resource-adapter-name>
                                </mdb:resource-adapter-binding>
                            </assembly-descriptor>
                        </jboss:ejb-jar>
                        """), "jboss-ejb3.xml");
    }

    private static JMSContext client() {
        MillraceConnectionFactory factory = new MillraceConnectionFactory(SampleBrokerExtension.bootstrap());
        factory.setRequestTimeoutMs(10_000);
        return factory.createContext();
    }

    @Test
    @Timeout(120)
    void shouldConfirmEachOrderExactlyOnce() throws Exception {
        int count = 20;
        try (JMSContext client = client()) {
            JMSConsumer confirmations = client.createConsumer(client.createQueue("order-confirmations"),
                    "orderId LIKE 'good-%'");
            assertThat(post("prefix=good-&count=" + count + "&quantity=2")).isEqualTo("placed " + count);

            List<String> received = new ArrayList<>();
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (new HashSet<>(received).size() < count && System.currentTimeMillis() < deadline) {
                long leftMs = Math.max(1, deadline - System.currentTimeMillis());
                String body = confirmations.receiveBody(String.class, leftMs);
                if (body != null) {
                    received.add(body);
                }
            }
            String late = confirmations.receiveBody(String.class, 2_000);
            if (late != null) {
                received.add(late);
            }
            Set<String> expected = new HashSet<>();
            for (int i = 1; i <= count; i++) {
                expected.add("confirmed good-" + i + ";2");
            }
            assertThat(received).as("each order confirmed exactly once").hasSize(count)
                    .containsExactlyInAnyOrderElementsOf(expected);
        }
        assertThat(deliveries()).filteredOn(d -> d.startsWith("good-")).as("each order delivered once")
                .hasSize(count).allMatch(d -> d.endsWith(";2:1:false"));
    }

    @Test
    @Timeout(120)
    void shouldRollBackBadOrderWithItsConfirmationRedeliverItAndDeadLetterIt() throws Exception {
        try (JMSContext client = client()) {
            JMSConsumer confirmations = client.createConsumer(client.createQueue("order-confirmations"),
                    "orderId LIKE 'bad-%' OR orderId LIKE 'after-bad-%'");
            JMSConsumer dlq = client.createConsumer(client.createQueue("orders.DLQ"));
            assertThat(post("prefix=bad-&count=1&quantity=0")).isEqualTo("placed 1");

            Message dead = dlq.receive(90_000);
            assertThat(dead).as("the bad order in orders.DLQ").isNotNull();
            assertThat(dead.getBody(String.class)).isEqualTo("bad-1;0");
            assertThat(dead.getStringProperty("JMS_Millrace_DLQReason")).isEqualTo("delivery-count-limit");
            assertThat(dead.getIntProperty("JMS_Millrace_DLQDeliveryCount")).isEqualTo(3);

            // an order placed after the bad one is confirmed; the bad one's confirmations were all rolled back
            assertThat(post("prefix=after-bad-&count=1&quantity=1")).isEqualTo("placed 1");
            assertThat(confirmations.receiveBody(String.class, WAIT_MS)).isEqualTo("confirmed after-bad-1;1");
            assertThat(confirmations.receiveBody(String.class, 2_000)).as("nothing more").isNull();
        }
        assertThat(deliveries()).filteredOn(d -> d.startsWith("bad-"))
                .containsExactly("bad-1;0:1:false", "bad-1;0:2:true", "bad-1;0:3:true");
    }

    @Test
    @Timeout(60)
    void shouldFailDeploymentNamingDestinationLookupWhenNothingIsBoundThere() {
        try {
            assertThatThrownBy(() -> deployer.deploy("unknown-queue"))
                    .hasStackTraceContaining("destinationLookup: nothing bound at 'java:/jms/millrace/queue/nowhere'");
        } finally {
            try {
                deployer.undeploy("unknown-queue");
            } catch (RuntimeException ignored) {
                // not deployed: nothing to remove
            }
        }
    }

    private String post(String query) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create(app + "orders?" + query)).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("POST orders?" + query + ": " + response.body()).isEqualTo(200);
        return response.body();
    }

    private List<String> deliveries() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create(app + "orders")).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body().lines().toList();
    }
}
