package dev.millrace.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The cluster settings and their cross-checks, in the command-line form issue 22 fixes. */
@Timeout(10)
class BrokerConfigClusterTest {

    private static final String VOTERS = "1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293";

    /** {@code server --port P --data-dir D --set node.id=N --set controller.quorum.voters=VOTERS}, as Millrace maps it. */
    private static BrokerConfig commandLine(int port, String dataDir, String... sets) {
        Map<String, String> overrides = new LinkedHashMap<>();
        for (String set : sets) {
            int eq = set.indexOf('=');
            overrides.put(set.substring(0, eq), set.substring(eq + 1));
        }
        overrides.put("port", String.valueOf(port));
        overrides.put("data.dir", dataDir);
        return BrokerConfigLoader.load(null, overrides);
    }

    @Test
    void shouldKeepTheEmbeddedSingleVoterByDefault() {
        BrokerConfig config = BrokerConfigLoader.load(null, Map.of());
        assertThat(config.isClusterMode()).isFalse();
        assertThat(config.quorumVoters()).hasToString("1@127.0.0.1:9093");
        assertThat(config.brokerRack()).isEmpty();
        assertThat(config.minInsyncReplicas()).isEqualTo(1);
        assertThat(config.replicaLagTimeMaxMs()).isEqualTo(30_000);
        assertThat(config.replicaFetchWaitMaxMs()).isEqualTo(500);
        assertThat(config.brokerSessionTimeoutMs()).isEqualTo(9000);
        assertThat(config.brokerHeartbeatIntervalMs()).isEqualTo(500);
        assertThat(config.uncleanLeaderElectionEnable()).isFalse();
        assertThat(config.leaderImbalanceCheckIntervalSeconds()).isEqualTo(300);
        assertThat(config.autoLeaderRebalanceEnable()).isTrue();
        assertThat(config.defaultReplicationFactor()).isEqualTo((short) 1);
    }

    @Test
    void shouldMoveTheEmbeddedVoterWithControllerHostAndPort() {
        BrokerConfig config = BrokerConfigLoader.fromMap(Map.of("node.id", "4", "controller.port", "9500"));
        assertThat(config.quorumVoters().hostPorts()).containsExactly(Map.entry(4, "127.0.0.1:9500"));
    }

    @Test
    void shouldTakeEachNodesVoterAddressFromItsOwnEntry() {
        for (int id = 1; id <= 3; id++) {
            int port = 9092 + (id - 1) * 100;
            BrokerConfig config = commandLine(port, "d" + id, "node.id=" + id, "controller.quorum.voters=" + VOTERS);
            assertThat(config.isClusterMode()).isTrue();
            assertThat(config.nodeId()).isEqualTo(id);
            assertThat(config.port()).isEqualTo(port);
            assertThat(config.dataDir().getPath()).isEqualTo("d" + id);
            assertThat(config.quorumVoters().hostPorts()).containsExactly(Map.entry(1, "127.0.0.1:9093"),
                    Map.entry(2, "127.0.0.1:9193"), Map.entry(3, "127.0.0.1:9293"));
            assertThat(config.controllerHost()).isEqualTo("127.0.0.1");
            assertThat(config.controllerPort()).isEqualTo(port + 1);
            assertThat(BrokerConfigLoader.values(config)).contains(new BrokerConfigLoader.SettingValue(
                    "controller.port", String.valueOf(port + 1), BrokerConfigLoader.values(config).stream()
                            .filter(v -> v.name().equals("controller.port")).findFirst().orElseThrow().doc()));
        }
    }

    @Test
    void shouldAcceptControllerHostAndPortThatMatchTheEntry() {
        BrokerConfig config = commandLine(9192, "d2", "node.id=2", "controller.quorum.voters=" + VOTERS,
                "controller.host=127.0.0.1", "controller.port=9193");
        assertThat(config.controllerPort()).isEqualTo(9193);
    }

    @Test
    void shouldRunANodeThatIsNotAVoterAsABrokerOnlyWithItsLearnerOnControllerHostAndPort() {
        BrokerConfig config = commandLine(9392, "d4", "node.id=4", "controller.quorum.voters=" + VOTERS,
                "controller.port=9393");
        assertThat(config.isClusterMode()).isTrue();
        assertThat(config.isQuorumVoter()).isFalse();
        assertThat(config.quorumVoters().nodeIds()).containsExactly(1, 2, 3);
        assertThat(config.controllerHost()).isEqualTo("127.0.0.1");
        assertThat(config.controllerPort()).isEqualTo(9393);
        assertThat(commandLine(9092, "d1", "node.id=1", "controller.quorum.voters=" + VOTERS).isQuorumVoter())
                .isTrue();
        assertThat(BrokerConfigLoader.load(null, Map.of()).isQuorumVoter()).isTrue();
    }

    @Test
    void shouldRefuseANonVoterWhoseLearnerAddressIsAVotersAddress() {
        // controller.port's default 9093 is voter 1's address here
        assertThatThrownBy(() -> commandLine(9392, "d4", "node.id=4", "controller.quorum.voters=" + VOTERS))
                .isInstanceOf(ConfigurationException.class)
                .satisfies(e -> assertThat(((ConfigurationException) e).problems()).containsExactly(
                        "controller.port: 127.0.0.1:9093 is voter 1's address in controller.quorum.voters; node.id 4 "
                                + "is not one of the ids in controller.quorum.voters (" + VOTERS + "), so this node "
                                + "joins as a broker only and its metadata learner listens on "
                                + "controller.host:controller.port, which must be an address of its own (or set "
                                + "node.id to 1 to run that voter)"));
    }

    @Test
    void shouldRefuseANonVoterWhoseKafkaPortIsItsLearnerPort() {
        assertThatThrownBy(() -> commandLine(9393, "d4", "node.id=4", "controller.quorum.voters=" + VOTERS,
                "controller.port=9393"))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("port: 9393 is also controller.port; node.id 4 is not one of the ids")
                .hasMessageContaining("the Kafka listener and the learner need different ports");
    }

    @Test
    void shouldRefuseAControllerAddressThatContradictsTheEntry() {
        assertThatThrownBy(() -> commandLine(9092, "d1", "node.id=1", "controller.quorum.voters=" + VOTERS,
                "controller.host=10.0.0.1", "controller.port=9193"))
                .isInstanceOf(ConfigurationException.class)
                .satisfies(e -> assertThat(((ConfigurationException) e).problems()).containsExactly(
                        "controller.host: 10.0.0.1 contradicts controller.quorum.voters, whose entry for node.id 1 "
                                + "is 1@127.0.0.1:9093 (each voter listens on its own entry's address); leave "
                                + "controller.host unset or set it to 127.0.0.1",
                        "controller.port: 9193 contradicts controller.quorum.voters, whose entry for node.id 1 "
                                + "is 1@127.0.0.1:9093 (each voter listens on its own entry's address); leave "
                                + "controller.port unset or set it to 9093"));
    }

    @Test
    void shouldRefuseAKafkaPortEqualToTheVoterPort() {
        assertThatThrownBy(() -> commandLine(9093, "d1", "node.id=1", "controller.quorum.voters=" + VOTERS))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("port: 9093 is also this node's voter port in controller.quorum.voters "
                        + "(1@127.0.0.1:9093)");
        assertThatThrownBy(() -> commandLine(9093, "d1"))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("port: 9093 is also controller.port");
    }

    @Test
    void shouldReportBadVotersWithTheOtherProblems() {
        assertThatThrownBy(() -> commandLine(9092, "d1", "node.id=1", "controller.quorum.voters=1@127.0.0.1:9093,2@x",
                "min.insync.replicas=0"))
                .isInstanceOf(ConfigurationException.class)
                .satisfies(e -> assertThat(((ConfigurationException) e).problems()).containsExactlyInAnyOrder(
                        "controller.quorum.voters: entry '2@x' is not id@host:port",
                        "min.insync.replicas: must be greater than or equal to 1 (was 0)"));
    }

    @Test
    void shouldReadTheReplicationSettings() {
        BrokerConfig config = BrokerConfigLoader.fromMap(Map.of("broker.rack", "rack-a", "min.insync.replicas", "2",
                "replica.lag.time.max.ms", "10000", "replica.fetch.wait.max.ms", "100",
                "broker.session.timeout.ms", "3000", "broker.heartbeat.interval.ms", "750",
                "unclean.leader.election.enable", "true", "leader.imbalance.check.interval.seconds", "5",
                "auto.leader.rebalance.enable", "false", "default.replication.factor", "3"));
        assertThat(config.brokerRack()).contains("rack-a");
        assertThat(List.of(config.minInsyncReplicas(), config.replicaFetchWaitMaxMs(), config.brokerSessionTimeoutMs(),
                config.brokerHeartbeatIntervalMs())).containsExactly(2, 100, 3000, 750);
        assertThat(config.replicaLagTimeMaxMs()).isEqualTo(10_000);
        assertThat(config.leaderImbalanceCheckIntervalSeconds()).isEqualTo(5);
        assertThat(config.uncleanLeaderElectionEnable()).isTrue();
        assertThat(config.autoLeaderRebalanceEnable()).isFalse();
        assertThat(config.defaultReplicationFactor()).isEqualTo((short) 3);
    }

    @Test
    void shouldRefuseTimeoutsInTheWrongOrder() {
        assertThatThrownBy(() -> BrokerConfigLoader.fromMap(Map.of("replica.fetch.wait.max.ms", "30000",
                "broker.heartbeat.interval.ms", "9000")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("replica.fetch.wait.max.ms: 30000 must be less than replica.lag.time.max.ms (30000)")
                .hasMessageContaining("broker.heartbeat.interval.ms: 9000 must be less than broker.session.timeout.ms "
                        + "(9000)");
    }
}
