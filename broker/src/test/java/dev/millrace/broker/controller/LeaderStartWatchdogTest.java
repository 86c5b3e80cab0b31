package dev.millrace.broker.controller;

import static dev.millrace.broker.controller.ControllerTestSupport.LOOPBACK;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import com.alipay.sofa.jraft.core.NodeImpl;

/**
 * The watchdog against a real single-voter quorum: this voter leads, and the "active term" the watchdog is given
 * stands for the state machine's, so a leader whose start is late is reported once per wait, with its threads and
 * jraft's description, and an active leader never is.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeaderStartWatchdogTest {

    @TempDir
    Path dir;

    private RaftController controller;

    @AfterEach
    void close() {
        if (controller != null) {
            controller.close();
        }
    }

    private NodeImpl startLeader() throws Exception {
        controller = new RaftController(ControllerConfig.singleVoter(1, dir.resolve("metadata"), LOOPBACK,
                ControllerTestSupport.freePort()).withInitialClusterId(ControllerTestSupport.CLUSTER_ID));
        controller.start();
        return (NodeImpl) controller.quorumNode();
    }

    @Test
    void shouldReportALeaderThatIsNotActiveOncePerTermAfterTheThreshold() throws Exception {
        NodeImpl node = startLeader();
        AtomicLong clock = new AtomicLong(1_000);
        LeaderStartWatchdog watchdog = new LeaderStartWatchdog(() -> node, () -> -1, clock::get, 3_000, "[test] ");

        assertThat(watchdog.check()).as("first sight of the wait").isNull();
        clock.addAndGet(2_999);
        assertThat(watchdog.check()).as("below the threshold").isNull();
        clock.addAndGet(1);
        String report = watchdog.check();
        clock.addAndGet(5_000);

        assertThat(report).contains("Leader of the quorum for at least 3000 ms",
                "configuration entry is not committed", "\"JRaft", "ballotBox");
        assertThat(watchdog.check()).as("reported once per wait").isNull();
    }

    @Test
    void shouldStayQuietWhileTheLeaderIsTheActiveController() throws Exception {
        NodeImpl node = startLeader();
        AtomicLong clock = new AtomicLong();
        LeaderStartWatchdog watchdog = new LeaderStartWatchdog(() -> node, () -> 1, clock::get, 3_000, "[test] ");

        for (int i = 0; i < 5; i++) {
            assertThat(watchdog.check()).isNull();
            clock.addAndGet(10_000);
        }
        LeaderStartWatchdog noNode = new LeaderStartWatchdog(() -> null, () -> -1, clock::get, 0, "[test] ");
        assertThat(noNode.check()).isNull();
        assertThat(noNode.check()).isNull();
    }
}
