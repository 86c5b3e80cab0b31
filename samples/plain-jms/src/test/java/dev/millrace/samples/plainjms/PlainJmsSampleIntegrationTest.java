package dev.millrace.samples.plainjms;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import javax.naming.Context;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.samples.testbroker.SampleBroker;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.Queue;
import jakarta.jms.Topic;

@Timeout(60)
class PlainJmsSampleIntegrationTest {

    @TempDir
    static Path dataDir;
    static SampleBroker broker;
    static Context jndi;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = SampleBroker.start(dataDir);
        jndi = Jndi.open(broker.bootstrap());
    }

    @AfterAll
    static void stopBroker() throws Exception {
        if (jndi != null) {
            jndi.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    private static ConnectionFactory factory() throws Exception {
        return (ConnectionFactory) jndi.lookup("ConnectionFactory");
    }

    @Test
    void shouldRunEveryScenarioWhenGivenTheBrokersOnTheCommandLine() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        boolean ok = PlainJmsSample.run(broker.bootstrap(), new PrintStream(bytes, true, StandardCharsets.UTF_8));

        String out = bytes.toString(StandardCharsets.UTF_8);
        assertThat(ok).as(out).isTrue();
        assertThat(out).contains(broker.bootstrap())
                .contains("queue orders: sent [order-1, order-2, order-3], received [order-1, order-2, order-3]")
                .contains("subscriber dashboard received [EUR 1.10, EUR 1.11, EUR 1.09]")
                .contains("subscriber audit received [EUR 1.10, EUR 1.11, EUR 1.09]")
                .contains("request/reply: quince -> quince=60")
                .contains("plain JMS sample: OK");
    }

    @Test
    void shouldDeliverQueueMessagesSentBeforeTheQueueEverHadAConsumer() throws Exception {
        // a brand-new queue on a broker whose share groups start at the log end by default
        Queue fresh = (Queue) jndi.lookup("dynamicQueues/never-consumed-before");
        List<String> sent = List.of("a", "b", "c", "d");

        List<String> received = QueueSendReceive.sendThenReceive(factory(), fresh, sent, 10_000);

        assertThat(received).containsExactlyElementsOf(sent);
    }

    @Test
    void shouldDeliverEveryPublishedMessageToEverySubscriber() throws Exception {
        Topic topic = (Topic) jndi.lookup("dynamicTopics/fan-out");
        List<String> published = List.of("p1", "p2", "p3", "p4", "p5");

        Map<String, List<String>> received = TopicPublishSubscribe.publishToSubscribers(factory(), topic,
                List.of("s1", "s2", "s3"), published, 10_000);

        assertThat(received).containsOnlyKeys("s1", "s2", "s3");
        assertThat(received.values()).allSatisfy(texts -> assertThat(texts).containsExactlyElementsOf(published));
    }

    @Test
    void shouldAnswerEachRequestOnItsTemporaryQueueCorrelatedToTheRequest() throws Exception {
        Queue requests = (Queue) jndi.lookup("dynamicQueues/rr-requests");
        try (PriceResponder responder = new PriceResponder(factory(), requests);
             PriceRequester requester = new PriceRequester(factory(), requests)) {
            for (String item : List.of("fig", "banana", "kiwi", "plum")) {
                // request() itself throws if the answer's JMSCorrelationID is not this request's JMSMessageID
                assertThat(requester.request(item, 10_000)).isEqualTo(item + "=" + item.length() * 10);
            }
        }
    }
}
