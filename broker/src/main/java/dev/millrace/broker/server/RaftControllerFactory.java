package dev.millrace.broker.server;

import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.millrace.broker.config.BrokerConfig;
import dev.millrace.broker.config.ConfigurationException;
import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.ControllerConfig;
import dev.millrace.broker.controller.EndpointProbe;
import dev.millrace.broker.controller.QuorumTls;
import dev.millrace.broker.controller.RaftController;
import dev.millrace.broker.share.ShareGroupConfigs;

/**
 * The SOFAJRaft controller voter inside the broker's process. Embedded mode (no
 * {@code controller.quorum.voters}) runs the only voter on {@code controller.host:controller.port};
 * a cluster node runs the voter of its own {@code controller.quorum.voters} entry (the loader has
 * put that entry's address in {@code controller.host}/{@code controller.port}); a cluster node whose
 * {@code node.id} is not among the voters runs a learner of the same quorum on
 * {@code controller.host:controller.port} (see {@link ControllerConfig#isLearner()}). Topic defaults,
 * broker session timeout, unclean election and the leader-imbalance check come from the broker's
 * settings of the same names; group configs are validated as share-group settings ({@link ShareGroupConfigs#change})
 * against this broker's {@code group.share.*} defaults.
 */
final class RaftControllerFactory {

    private RaftControllerFactory() {
    }

    static Controller create(BrokerConfig config, File metadataDir, String initialClusterId) {
        ControllerConfig controllerConfig = ControllerConfig.singleVoter(config.nodeId(), metadataDir.toPath(),
                        config.controllerHost(), config.controllerPort())
                .withVoters(config.quorumVoters().hostPorts())
                .withTopicDefaults(config.numPartitions(), config.defaultReplicationFactor())
                .withInitialClusterId(initialClusterId)
                .withStartTimeout(Duration.ofMillis(config.controllerQuorumStartTimeoutMs()))
                .withBrokerSessionTimeout(Duration.ofMillis(config.brokerSessionTimeoutMs()))
                // a broker that looks dead (connection closed, ran the previous controller) must heartbeat within two
                // of its intervals: a live one does, a killed one is fenced in about a second with the default 500 ms
                .withBrokerUnreachableGrace(Duration.ofMillis(2L * config.brokerHeartbeatIntervalMs()))
                .withUncleanLeaderElection(config.uncleanLeaderElectionEnable())
                .withLeaderImbalanceCheckInterval(config.autoLeaderRebalanceEnable()
                        ? Duration.ofSeconds(config.leaderImbalanceCheckIntervalSeconds()) : Duration.ZERO)
                .withQuorumTls(quorumTls(config));
        RaftController controller = new RaftController(controllerConfig);
        // a broker whose heartbeat connection closed and whose port refuses connections is fenced at once
        controller.setEndpointProbe(EndpointProbe.tcp(500));
        // group configs are the share groups' settings, checked against this broker's defaults
        controller.setGroupConfigPolicy(new ShareGroupConfigs(config.shareGroupConfig())::change);
        return controller;
    }

    /** The quorum's mutual TLS from the broker's key store, checked now; null for a PLAINTEXT quorum. */
    private static QuorumTls quorumTls(BrokerConfig config) {
        if (!config.quorumUsesTls()) {
            return null;
        }
        Map<String, String> ssl = config.sslSettings();
        try {
            return new QuorumTls(Path.of(ssl.get("ssl.keystore.location")), ssl.get("ssl.keystore.password"),
                    ssl.get("ssl.keystore.type")).check();
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(List.of(e.getMessage()));
        }
    }
}
