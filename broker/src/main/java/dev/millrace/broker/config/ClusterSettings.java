package dev.millrace.broker.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Checks of the cluster settings against each other, beyond what one setting's constraint can say, and
 * the one place that derives this node's voter address from {@code controller.quorum.voters}.
 *
 * <p>When the voters are set (cluster mode):
 * <ul>
 *   <li>the list must parse ({@link QuorumVoters#parse});
 *   <li>when {@code node.id} is one of the voters, this node's voter listens on its own entry's address, so
 *       {@code controller.host} and {@code controller.port}, when given explicitly, must equal that entry;
 *       afterwards they hold it, so code that reads {@link BrokerConfig#controllerHost()}/
 *       {@link BrokerConfig#controllerPort()} and DescribeConfigs see the address the voter really uses;
 *   <li>when {@code node.id} is not one of the voters, the node joins as a broker only: its metadata quorum
 *       learner (it replicates the metadata log, never votes) listens on {@code controller.host}:
 *       {@code controller.port}, which must not be a voter's address.
 * </ul>
 * In both modes the Kafka listener's {@code port} (when {@code listeners} is not set; else {@link ListenerSettings}
 * checks the listeners' ports) must differ from the voter's port,
 * {@code replica.fetch.wait.max.ms} must be below {@code replica.lag.time.max.ms} and
 * {@code broker.heartbeat.interval.ms} below {@code broker.session.timeout.ms}.
 *
 * <p>Stateless; called by {@link BrokerConfigLoader} on a config that is still being built (one thread).
 */
final class ClusterSettings {

    private ClusterSettings() {
    }

    /**
     * Checks {@code config}, whose settings named in {@code given} were set explicitly (file or command
     * line), and in cluster mode sets its controller address to this node's entry.
     *
     * @return the problems found, each naming its settings; empty when none
     */
    static List<String> checkAndResolve(BrokerConfig config, Set<String> given) {
        List<String> problems = new ArrayList<>();
        if (config.isClusterMode()) {
            checkVoters(config, given, problems);
        } else if (config.listeners.isBlank() && config.port != 0 && config.port == config.controllerPort) {
            problems.add("port: " + config.port + " is also controller.port; the Kafka listener and the metadata "
                    + "quorum voter need different ports");
        }
        if (config.quorumUsesTls()) {
            if (config.sslKeystoreLocation.isBlank()) {
                problems.add("ssl.keystore.location: must be set: controller.quorum.security.protocol is SSL and the "
                        + "quorum's nodes present that store's certificate to each other");
            } else if (config.sslKeystoreType.equalsIgnoreCase("PEM")) {
                problems.add("ssl.keystore.type: PEM cannot be used by the metadata quorum "
                        + "(controller.quorum.security.protocol=SSL): use a PKCS12 or JKS store");
            }
        }
        if (config.replicaFetchWaitMaxMs >= config.replicaLagTimeMaxMs) {
            problems.add("replica.fetch.wait.max.ms: " + config.replicaFetchWaitMaxMs + " must be less than "
                    + "replica.lag.time.max.ms (" + config.replicaLagTimeMaxMs + "), or caught-up followers would "
                    + "leave the ISR");
        }
        if (config.brokerHeartbeatIntervalMs >= config.brokerSessionTimeoutMs) {
            problems.add("broker.heartbeat.interval.ms: " + config.brokerHeartbeatIntervalMs + " must be less than "
                    + "broker.session.timeout.ms (" + config.brokerSessionTimeoutMs + "), or live brokers would be "
                    + "fenced");
        }
        return problems;
    }

    private static void checkVoters(BrokerConfig config, Set<String> given, List<String> problems) {
        QuorumVoters voters;
        try {
            voters = QuorumVoters.parse(config.controllerQuorumVoters);
        } catch (ConfigurationException e) {
            problems.addAll(e.problems());
            return;
        }
        if (!voters.contains(config.nodeId)) {
            checkLearner(config, voters, problems);
            return;
        }
        HostPort own = voters.address(config.nodeId);
        String entry = config.nodeId + "@" + own;
        if (given.contains("controller.host") && !config.controllerHost.equals(own.host())) {
            problems.add("controller.host: " + config.controllerHost + " contradicts " + QuorumVoters.SETTING
                    + ", whose entry for node.id " + config.nodeId + " is " + entry + " (each voter listens on its "
                    + "own entry's address); leave controller.host unset or set it to " + own.host());
        }
        if (given.contains("controller.port") && config.controllerPort != own.port()) {
            problems.add("controller.port: " + config.controllerPort + " contradicts " + QuorumVoters.SETTING
                    + ", whose entry for node.id " + config.nodeId + " is " + entry + " (each voter listens on its "
                    + "own entry's address); leave controller.port unset or set it to " + own.port());
        }
        if (config.listeners.isBlank() && config.port == own.port()) {
            problems.add("port: " + config.port + " is also this node's voter port in " + QuorumVoters.SETTING
                    + " (" + entry + "); the Kafka listener and the voter need different ports");
        }
        config.controllerHost = own.host();
        config.controllerPort = own.port();
    }

    /** A node outside the voters: its learner's address is controller.host:controller.port. */
    private static void checkLearner(BrokerConfig config, QuorumVoters voters, List<String> problems) {
        if (config.controllerHost == null || config.controllerHost.isBlank() || config.controllerPort < 1
                || config.controllerPort > 65535) {
            return; // already reported by the settings' own constraints
        }
        HostPort learner = new HostPort(config.controllerHost, config.controllerPort);
        String notVoter = "node.id " + config.nodeId + " is not one of the ids in " + QuorumVoters.SETTING + " ("
                + voters + "), so this node joins as a broker only and its metadata learner listens on "
                + "controller.host:controller.port";
        for (int id : voters.nodeIds()) {
            if (voters.address(id).equals(learner)) {
                problems.add("controller.port: " + learner + " is voter " + id + "'s address in "
                        + QuorumVoters.SETTING + "; " + notVoter + ", which must be an address of its own (or set "
                        + "node.id to " + id + " to run that voter)");
            }
        }
        if (config.listeners.isBlank() && config.port == config.controllerPort) {
            problems.add("port: " + config.port + " is also controller.port; " + notVoter
                    + ", and the Kafka listener and the learner need different ports");
        }
    }
}
