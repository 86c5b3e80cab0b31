package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaAlteration.Op;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.requests.AlterClientQuotasRequest;
import org.apache.kafka.common.requests.AlterClientQuotasResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.quota.QuotaType;
import dev.millrace.protocol.net.BrokerChannel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;

/**
 * Client quotas in a three-node cluster: altered through a node that is not the active controller (forwarded to it,
 * per-entity errors carried back), then enforced by every node from its own metadata image.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ClientQuotaClusterIntegrationTest {

    @TempDir
    Path dir;

    private InProcessCluster cluster;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = InProcessCluster.start(dir, 3, Map.of());
    }

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void shouldForwardQuotaChangesToTheActiveControllerAndApplyThemOnEveryNode() throws Exception {
        int active = cluster.broker(cluster.runningIds().get(0)).controller().activeControllerId().orElseThrow();
        int other = cluster.nodeIds().stream().filter(id -> id != active).findFirst().orElseThrow();
        String bootstrap = "127.0.0.1:" + cluster.broker(other).boundAddress().getPort();
        ClientQuotaEntity reports = new ClientQuotaEntity(Map.of("client-id", "reports"));
        ClientQuotaEntity bad = new ClientQuotaEntity(Map.of("user", "bad"));
        EventLoopGroup group = new NioEventLoopGroup(1);
        try {
            // sent straight to the node that is not the active controller: forwarded, its per-entity results back
            BrokerChannel channel = BrokerChannel.connect(group.next(), "127.0.0.1",
                    cluster.broker(other).boundAddress().getPort(), "quota-admin", 30_000).get(30, TimeUnit.SECONDS);
            try {
                AlterClientQuotasResponse response = channel.<AlterClientQuotasResponse>send(
                        new AlterClientQuotasRequest.Builder(List.of(
                                new ClientQuotaAlteration(reports, List.of(new Op("producer_byte_rate", 4096.0))),
                                new ClientQuotaAlteration(bad, List.of(new Op("producer_byte_rate", -4096.0)))),
                                false), ApiKeys.ALTER_CLIENT_QUOTAS.latestVersion()).get(30, TimeUnit.SECONDS);
                assertThat(response.data().entries()).extracting(e -> Errors.forCode(e.errorCode()))
                        .containsExactly(Errors.NONE, Errors.INVALID_REQUEST);
                assertThat(response.data().entries().get(1).errorMessage()).contains("-4096.0");
            } finally {
                channel.close();
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        }
        cluster.awaitCondition(() -> cluster.runningIds().stream().allMatch(id -> {
            var match = cluster.broker(id).clientQuotas().find(QuotaType.PRODUCE, "anyone", "reports");
            return match != null && match.quota() == 4096.0;
        }), "every node enforcing the quota", Duration.ofSeconds(60));
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            assertThat(admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get(30, TimeUnit.SECONDS))
                    .containsOnly(Map.entry(reports, Map.of("producer_byte_rate", 4096.0)));
        }
    }
}
