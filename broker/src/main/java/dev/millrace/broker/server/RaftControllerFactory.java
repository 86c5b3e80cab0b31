package dev.millrace.broker.server;

import java.io.File;
import java.util.List;

import dev.millrace.broker.config.BrokerConfig;
import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.ControllerConfig;
import dev.millrace.broker.controller.RaftController;

/** Embedded mode: a single-voter SOFAJRaft controller inside the broker's process. */
final class RaftControllerFactory {

    private RaftControllerFactory() {
    }

    static Controller create(BrokerConfig config, File metadataDir) {
        ControllerConfig single = ControllerConfig.singleVoter(config.nodeId(), metadataDir.toPath(),
                config.controllerHost(), config.controllerPort());
        ControllerConfig withDefaults = new ControllerConfig(single.nodeId(), single.dataDir(), single.host(),
                single.port(), single.voters(), config.numPartitions(), config.defaultReplicationFactor(),
                List.of(config.nodeId()), single.electionTimeout(), single.snapshotInterval(), single.startTimeout(),
                single.requestTimeout());
        return new RaftController(withDefaults);
    }
}
