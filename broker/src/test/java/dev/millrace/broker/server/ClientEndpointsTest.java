package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.requests.ProduceResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.controller.BrokerState;
import dev.millrace.broker.controller.ListenerEndpoint;
import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.BrokerImage;

@Timeout(10)
class ClientEndpointsTest {

    private static final ListenerName SSL = ListenerName.normalised("SSL");
    private static final ListenerName PLAINTEXT = ListenerName.normalised("PLAINTEXT");

    private final MetadataImage image = new MetadataImage(1, Map.of(), 0, "c", Map.of(
            2, new BrokerImage(2, Uuid.randomUuid(), 5, "10.0.0.2", 9092, null, BrokerState.UNFENCED,
                    Map.of("SSL", new ListenerEndpoint("b2.example", 9093),
                            "PLAINTEXT", new ListenerEndpoint("10.0.0.2", 9092))),
            3, new BrokerImage(3, Uuid.randomUuid(), 6, "10.0.0.3", 9092, null, BrokerState.UNFENCED)));
    private final ClientEndpoints endpoints = new ClientEndpoints.Builder(1, () -> image)
            .add("PLAINTEXT", "10.0.0.1", 9092).add("SSL", "b1.example", 9093).build("PLAINTEXT");

    @Test
    void shouldDescribeEveryBrokerOnTheListenerTheClientUses() {
        assertThat(endpoints.of(1, "10.0.0.1", 9092, SSL)).isEqualTo(new ClientEndpoints.Endpoint("b1.example", 9093));
        assertThat(endpoints.of(2, "10.0.0.2", 9092, SSL)).isEqualTo(new ClientEndpoints.Endpoint("b2.example", 9093));
        assertThat(endpoints.of(2, "10.0.0.2", 9092, PLAINTEXT))
                .isEqualTo(new ClientEndpoints.Endpoint("10.0.0.2", 9092));
        // a broker that registered no listeners: its inter-broker endpoint
        assertThat(endpoints.of(3, "10.0.0.3", 9092, SSL)).isEqualTo(new ClientEndpoints.Endpoint("10.0.0.3", 9092));
    }

    @Test
    void shouldRewriteTheLeaderEndpointsOfAProduceResponseForTheClientsListener() {
        ProduceResponseData data = new ProduceResponseData();
        data.nodeEndpoints().add(new ProduceResponseData.NodeEndpoint().setNodeId(2).setHost("10.0.0.2")
                .setPort(9092));
        ProduceResponse response = endpoints.forListener(new ProduceResponse(data), SSL);
        assertThat(response.data().nodeEndpoints()).singleElement().satisfies(n -> {
            assertThat(n.host()).isEqualTo("b2.example");
            assertThat(n.port()).isEqualTo(9093);
        });
    }
}
