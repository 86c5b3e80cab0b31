package dev.millrace.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.cli.ClusterLayout;
import dev.millrace.broker.cli.NodeProcess;

/**
 * The process harness itself: nodes on the ports it chose, SIGKILL and SIGTERM of one node, a restart on
 * the same ports and data directory. The two nodes form one cluster (two voters); this checks processes, ports
 * and node ids, not replication (ClusterCrashIntegrationTest does).
 */
@Timeout(240)
class ClusterProcessesIntegrationTest {

    @TempDir
    Path tmp;

    @Test
    void shouldKillStopAndRestartNodesOnTheirOwnPorts() throws Exception {
        try (ClusterProcesses cluster = ClusterProcesses.start(2, tmp, Map.of())) {
            assertThat(cluster.nodeIds()).containsExactly(1, 2);
            ClusterLayout.Node one = cluster.layout().node(1);
            assertThat(cluster.bootstrap()).isEqualTo(one.bootstrap() + "," + cluster.bootstrap(2));
            assertThat(nodeIdAt(cluster.bootstrap(2))).isEqualTo(2);

            cluster.kill(1);
            assertThat(cluster.isRunning(1)).isFalse();
            assertThat(NodeProcess.accepts(one.kafkaPort())).isFalse();
            assertThat(NodeProcess.accepts(one.voterPort())).isFalse();

            long oldPid = cluster.pid(1);
            cluster.restart(1);
            assertThat(cluster.pid(1)).isNotEqualTo(oldPid);
            assertThat(NodeProcess.accepts(one.voterPort())).isTrue();
            assertThat(nodeIdAt(one.bootstrap())).isEqualTo(1);
            assertThat(Files.readString(one.logFile()).split("HV000001", -1)).as("the log is kept across restarts, "
                    + "one config load per start").hasSize(3);

            cluster.stop(2);
            assertThat(cluster.isRunning(2)).isFalse();
            assertThat(Files.readString(cluster.layout().node(2).logFile())).contains("Broker 2 stopped");
            assertThatThrownBy(() -> cluster.kill(3)).hasMessage("no node 3; nodes are [1, 2]");
        }
    }

    /** The id under which the cluster lists the broker listening at {@code bootstrap} (one host:port). */
    private static int nodeIdAt(String bootstrap) throws Exception {
        int port = Integer.parseInt(bootstrap.substring(bootstrap.lastIndexOf(':') + 1));
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            return admin.describeCluster().nodes().get().stream().filter(node -> node.port() == port)
                    .findFirst().orElseThrow(() -> new AssertionError("no broker listed on port " + port)).id();
        }
    }
}
