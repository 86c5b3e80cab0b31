package dev.millrace.broker.server;

import java.io.File;
import java.io.IOException;

import dev.millrace.broker.config.BrokerConfig;
import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.ControllerConfig;
import dev.millrace.broker.controller.RaftController;

/**
 * Embedded mode: a single-voter SOFAJRaft controller inside the broker's process, which commits the
 * broker's cluster id ({@link ClusterIdentity}, kept in the data directory) as the cluster's id.
 */
final class RaftControllerFactory {

    private RaftControllerFactory() {
    }

    static Controller create(BrokerConfig config, File metadataDir) throws IOException {
        String clusterId = ClusterIdentity.loadOrCreate(metadataDir.getAbsoluteFile().getParentFile(), config.nodeId())
                .clusterId();
        ControllerConfig controllerConfig = ControllerConfig.singleVoter(config.nodeId(), metadataDir.toPath(),
                        config.controllerHost(), config.controllerPort())
                .withTopicDefaults(config.numPartitions(), config.defaultReplicationFactor())
                .withInitialClusterId(clusterId);
        return new RaftController(controllerConfig);
    }
}
