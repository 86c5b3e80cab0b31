package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.controller.MetadataImage.BrokerImage;
import dev.millrace.broker.controller.MetadataRecord.BrokerRegistrationRecord;
import dev.millrace.broker.controller.MetadataRecord.BrokerStateRecord;
import dev.millrace.broker.controller.MetadataRecord.ClusterIdRecord;
import dev.millrace.broker.controller.MetadataRecord.PartitionRecord;
import dev.millrace.broker.controller.MetadataRecord.TopicRecord;

/** The replay invariants of the membership records and of partition leadership. */
class MetadataImageBuilderTest {

    private static final Uuid A = new Uuid(0, 1);
    private static final Uuid B = new Uuid(0, 2);

    private static MetadataImage replay(MetadataImage base, MetadataRecord... records) {
        return ImageFixtures.replay(base, List.of(records));
    }

    @Test
    @Timeout(10)
    void shouldSetTheClusterIdOnceAndRefuseAnotherOne() {
        MetadataImage image = replay(MetadataImage.EMPTY, new ClusterIdRecord("c1"));

        assertThat(image.clusterId()).isEqualTo("c1");
        assertThat(replay(image, new ClusterIdRecord("c1")).clusterId()).isEqualTo("c1");
        assertThatThrownBy(() -> replay(image, new ClusterIdRecord("c2")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already c1");
        assertThat(MetadataImage.EMPTY.clusterId()).isNull();
    }

    @Test
    @Timeout(10)
    void shouldRegisterFencedReplaceWithALargerEpochAndRefuseAnOlderOne() {
        MetadataImage image = replay(MetadataImage.EMPTY,
                new BrokerRegistrationRecord(1, A, 10, "h", 1, "r"),
                new BrokerStateRecord(1, 10, BrokerState.UNFENCED));
        MetadataImage again = replay(image, new BrokerRegistrationRecord(1, B, 11, "h2", 2, null));

        assertThat(image.brokers()).containsExactly(java.util.Map.entry(1,
                new BrokerImage(1, A, 10, "h", 1, "r", BrokerState.UNFENCED)));
        assertThat(again.brokers().get(1)).isEqualTo(new BrokerImage(1, B, 11, "h2", 2, null, BrokerState.FENCED));
        assertThatThrownBy(() -> replay(image, new BrokerRegistrationRecord(1, B, 10, "h", 1, null)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already registered with epoch 10");
    }

    @Test
    @Timeout(10)
    void shouldRefuseAStateChangeForAStaleEpochOrAnUnknownBroker() {
        MetadataImage image = replay(MetadataImage.EMPTY, new BrokerRegistrationRecord(1, A, 10, "h", 1, null),
                new BrokerRegistrationRecord(1, B, 12, "h", 1, null));

        assertThatThrownBy(() -> replay(image, new BrokerStateRecord(1, 10, BrokerState.UNFENCED)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("registered with epoch 12, not 10");
        assertThatThrownBy(() -> replay(image, new BrokerStateRecord(2, 10, BrokerState.UNFENCED)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("broker 2 is not registered");
    }

    @Test
    @Timeout(10)
    void shouldRefuseALeaderOutsideTheIsrOrAnIsrOutsideTheReplicas() {
        MetadataImage image = replay(MetadataImage.EMPTY, new TopicRecord("t", A));

        assertThatThrownBy(() -> replay(image, new PartitionRecord(A, 0, List.of(1, 2), List.of(2), 1, 0, 0)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("leader 1 is not in the ISR [2]");
        assertThatThrownBy(() -> replay(image, new PartitionRecord(A, 0, List.of(1, 2), List.of(1, 3), 1, 0, 0)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not a subset of the replicas");
        assertThat(replay(image, new PartitionRecord(A, 0, List.of(1, 2), List.of(1), -1, 1, 1))
                .topic("t").orElseThrow().partitions().get(0).leader()).isEqualTo(-1);
    }
}
