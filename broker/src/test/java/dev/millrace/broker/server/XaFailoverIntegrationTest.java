package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.cli.XaClient;
import dev.millrace.broker.txn.TransactionStateTopic;
import dev.millrace.protocol.ext.XaCodes;
import dev.millrace.protocol.ext.XaComplete;
import dev.millrace.protocol.ext.XaRecover;
import dev.millrace.protocol.ext.XaXid;

/**
 * XA on three brokers: a branch prepared at one coordinator survives that broker's stop (the partition's new
 * leader loads it from the replicated transaction log), is listed by the recover of the remaining brokers, and is
 * committed there by Xid, its records then visible exactly once.
 */
@Timeout(180)
class XaFailoverIntegrationTest {

    private static final String TOPIC = "xa-topic";
    private static final int TXN_PARTITIONS = 3;

    @TempDir
    Path dir;

    private InProcessCluster cluster;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = InProcessCluster.start(dir, 3, Map.of("transaction.state.log.num.partitions",
                String.valueOf(TXN_PARTITIONS)));
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 3))).all().get(30, TimeUnit.SECONDS);
        }
        for (int p = 0; p < 2; p++) {
            TopicPartition tp = new TopicPartition(TOPIC, p);
            await(() -> leaderOf(tp) >= 0 && cluster.runningIds().stream().allMatch(id -> cluster.broker(id)
                    .partitionManager().partition(tp).isPresent()), "the replicas of " + tp + " open");
        }
    }

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void shouldKeepAPreparedBranchWhenItsCoordinatorStopsAndCommitItAtTheNewOne() throws Exception {
        String transactionalId = "xa-failover-tx";
        TopicPartition coordinatorPartition = new TopicPartition(TransactionStateTopic.NAME,
                Utils.abs(transactionalId.hashCode()) % TXN_PARTITIONS);
        await(() -> leaderOf(coordinatorPartition) >= 0 && isrOf(coordinatorPartition).size() == 3,
                coordinatorPartition + " led, with three in-sync replicas");
        int coordinator = leaderOf(coordinatorPartition);
        int stoppedPort = address(coordinator).getPort();
        XaXid xid = XaIntegrationTest.xid("failover");

        try (XaClient client = new XaClient(cluster.bootstrap(), Duration.ofSeconds(60))) {
            XaIntegrationTest.prepareBranch(cluster.bootstrap(), client, address(coordinator), transactionalId, xid,
                    "f1", "f2", "f3");
            assertThat(client.recoverAll(null)).extracting(l -> l.branch().xid()).containsExactly(xid);

            cluster.stop(coordinator);
            await(() -> leaderOf(coordinatorPartition) >= 0 && leaderOf(coordinatorPartition) != coordinator,
                    "a new leader of " + coordinatorPartition);

            List<XaClient.Listed> listed = client.recoverAll(null);
            assertThat(listed).singleElement().satisfies(l -> {
                assertThat(l.branch().xid()).isEqualTo(xid);
                assertThat(l.branch().state()).isEqualTo(XaRecover.BranchState.PREPARED);
                assertThat(l.coordinator().getPort()).isNotEqualTo(stoppedPort);
            });
            assertThat(ReadCommitted.values(cluster.bootstrap(), TOPIC, 2)).isEmpty();
            XaComplete.Response committed = client.complete(xid, XaComplete.Action.COMMIT, false);
            assertThat(committed.xaCode()).as(committed.errorMessage()).isEqualTo(XaCodes.XA_OK);
        }
        assertThat(ReadCommitted.values(cluster.bootstrap(), TOPIC, 2)).containsExactlyInAnyOrder("f1", "f2", "f3");
    }

    private InetSocketAddress address(int id) {
        return new InetSocketAddress("127.0.0.1", cluster.broker(id).boundAddress().getPort());
    }

    private int leaderOf(TopicPartition tp) {
        int any = cluster.runningIds().get(0);
        return cluster.broker(any).controller().image().topic(tp.topic())
                .map(t -> t.partitions().get(tp.partition()).leader()).orElse(-1);
    }

    private List<Integer> isrOf(TopicPartition tp) {
        int any = cluster.runningIds().get(0);
        return cluster.broker(any).controller().image().topic(tp.topic())
                .map(t -> t.partitions().get(tp.partition()).isr()).orElse(List.of());
    }

    private void await(BooleanSupplier condition, String what) throws InterruptedException {
        cluster.awaitCondition(condition, what, Duration.ofSeconds(60));
    }
}
