package dev.millrace.broker.server;

import java.util.Optional;

import org.apache.kafka.common.Node;

import dev.millrace.broker.controller.BrokerState;
import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.BrokerImage;
import dev.millrace.broker.coordinator.CoordinatorLocator;

/**
 * {@link CoordinatorLocator}s over the latest metadata: the coordinator of partition {@code p} of an internal topic
 * is that partition's leader, at the endpoint it registered; none while the partition has no leader or the leader
 * is fenced (a broker the controller no longer hears from).
 */
final class ClusterCoordinatorLocators {

    private ClusterCoordinatorLocators() {
    }

    static CoordinatorLocator forTopic(Controller controller, String topic) {
        return partition -> {
            MetadataImage image = controller.image();
            return image.topic(topic).map(t -> t.partitions().get(partition)).flatMap(p -> {
                BrokerImage leader = p.leader() < 0 ? null : image.brokers().get(p.leader());
                return leader == null || leader.state() == BrokerState.FENCED ? Optional.empty()
                        : Optional.of(new Node(leader.id(), leader.host(), leader.port()));
            });
        };
    }
}
