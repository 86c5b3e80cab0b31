package dev.millrace.broker.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

@Timeout(10)
class ClusterLayoutTest {

    @TempDir
    Path tmp;

    @Test
    void shouldPlaceNodeIOnPortsOneHundredApart() {
        ClusterLayout layout = ClusterLayout.withBasePort(3, Path.of("c"), 9092);
        assertThat(layout.nodes()).containsExactly(
                new ClusterLayout.Node(1, 9092, 9093, Path.of("c", "node-1"), Path.of("c", "node-1.log")),
                new ClusterLayout.Node(2, 9192, 9193, Path.of("c", "node-2"), Path.of("c", "node-2.log")),
                new ClusterLayout.Node(3, 9292, 9293, Path.of("c", "node-3"), Path.of("c", "node-3.log")));
        assertThat(layout.voters()).isEqualTo("1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293");
        assertThat(layout.bootstrap()).isEqualTo("127.0.0.1:9092,127.0.0.1:9192,127.0.0.1:9292");
    }

    @Test
    void shouldGiveEachNodeTheIssueCommandLineFormPlusTheSharedSettings() {
        ClusterLayout layout = ClusterLayout.withBasePort(3, Path.of("c"), 9092);
        assertThat(layout.serverArgs(2, Map.of("min.insync.replicas", "2"))).containsExactly("--port", "9192",
                "--data-dir", Path.of("c", "node-2").toString(), "--set", "host=127.0.0.1", "--set", "node.id=2",
                "--set", "controller.quorum.voters=1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293",
                "--set", "min.insync.replicas=2");
        assertThatThrownBy(() -> layout.node(4)).hasMessage("no node 4; nodes are 1..3");
    }

    @Test
    void shouldTakeAnyPortsForTests() {
        ClusterLayout layout = ClusterLayout.of(Path.of("c"), List.of(new ClusterLayout.Ports(40001, 40002),
                new ClusterLayout.Ports(40101, 40003)));
        assertThat(layout.voters()).isEqualTo("1@127.0.0.1:40002,2@127.0.0.1:40003");
    }

    @Test
    void shouldRefuseNodeCountsOutsideOneToNineAndPortsOutOfRange() {
        assertThatThrownBy(() -> ClusterLayout.withBasePort(0, tmp, 9092)).hasMessageStartingWith(
                "--nodes: 0 is not 1..9");
        assertThatThrownBy(() -> ClusterLayout.withBasePort(10, tmp, 9092)).hasMessageStartingWith(
                "--nodes: 10 is not 1..9");
        assertThatThrownBy(() -> ClusterLayout.withBasePort(3, tmp, 65400)).hasMessage(
                "--base-port: 65400 puts the ports of 3 nodes outside 1..65535 (they span 65400..65601)");
        assertThatThrownBy(() -> ClusterLayout.withBasePort(1, tmp, 0)).hasMessageStartingWith("--base-port: 0");
    }

    @Test
    void shouldExitWithStatusTwoAndAMessageBeforeStartingAnything() {
        StringWriter err = new StringWriter();
        int status = new CommandLine(new Millrace()).setErr(new PrintWriter(err, true))
                .execute("cluster", "--nodes", "10", "--data-dir", tmp.resolve("c").toString());
        assertThat(status).isEqualTo(2);
        assertThat(err.toString()).contains("millrace cluster: --nodes: 10 is not 1..9");
        assertThat(tmp.resolve("c")).doesNotExist();
    }
}
