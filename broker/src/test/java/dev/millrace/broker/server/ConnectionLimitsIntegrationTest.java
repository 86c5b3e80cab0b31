package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.message.FetchRequestData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.network.CloseReason;
import dev.millrace.broker.network.NetworkStats;

/**
 * The connection limits on a broker on loopback ({@code max.connections}, {@code max.connections.per.ip},
 * {@code connections.max.idle.ms}), with raw sockets as the clients that pass them and a kafka-clients producer and
 * consumer that must keep being served.
 */
@Timeout(120)
class ConnectionLimitsIntegrationTest {

    private static final int READ_TIMEOUT_MS = 20_000;

    @TempDir
    Path dataDir;

    private BrokerServer broker;
    private final List<RawConnection> raw = new ArrayList<>();

    @AfterEach
    void stop() throws IOException {
        for (RawConnection connection : raw) {
            connection.close();
        }
        if (broker != null) {
            assertThat(broker.networkStats().unexpectedErrors()).isZero();
            broker.close();
        }
    }

    @Test
    void shouldRefuseConnectionsFromAnAddressPastMaxConnectionsPerIp() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of("max.connections.per.ip", "5"));
        InetSocketAddress address = broker.boundAddress();
        NetworkStats stats = broker.networkStats();
        try (LogCapture logs = new LogCapture();
             WellBehavedClient client = new WellBehavedClient(TestBrokers.bootstrap(broker), "well-behaved")) {
            client.roundTrip(3);
            // another client address: 127.0.0.2 (the well-behaved client is 127.0.0.1, below its own limit)
            for (int i = 0; i < 5; i++) {
                raw.add(servedConnection("127.0.0.2", address, i));
            }
            try (RawConnection refused = RawConnection.open("127.0.0.2", address, READ_TIMEOUT_MS)) {
                assertThat(refused.awaitClosedByBroker()).isTrue();
                assertThat(logs.awaitLinesWith(10_000, "Closing connection from " + refused.localAddress(),
                        "(TOO_MANY_CONNECTIONS_FROM_IP)", "max.connections.per.ip (5) connections from 127.0.0.2"))
                        .hasSize(1);
            }
            assertThat(stats.closed(CloseReason.TOO_MANY_CONNECTIONS_FROM_IP)).isEqualTo(1);
            client.roundTrip(3);
            long open = stats.openConnections();
            raw.remove(0).close(); // one slot frees: a new connection from 127.0.0.2 is served again
            awaitCount(() -> open - stats.openConnections(), 1);
            raw.add(servedConnection("127.0.0.2", address, 9));
            client.roundTrip(3);
        }
    }

    @Test
    void shouldRefuseConnectionsPastMaxConnections() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of("max.connections", "12"));
        InetSocketAddress address = broker.boundAddress();
        NetworkStats stats = broker.networkStats();
        try (LogCapture logs = new LogCapture();
             WellBehavedClient client = new WellBehavedClient(TestBrokers.bootstrap(broker), "well-behaved")) {
            client.roundTrip(3);
            long open = stats.openConnections();
            assertThat(open).isBetween(1L, 11L);
            for (long i = open; i < 12; i++) {
                raw.add(servedConnection("127.0.0.1", address, (int) i));
            }
            try (RawConnection refused = RawConnection.open(address, READ_TIMEOUT_MS)) {
                assertThat(refused.awaitClosedByBroker()).isTrue();
                assertThat(logs.awaitLinesWith(10_000, "Closing connection from " + refused.localAddress(),
                        "(TOO_MANY_CONNECTIONS)", "max.connections (12) connections are open")).hasSize(1);
            }
            assertThat(stats.closed(CloseReason.TOO_MANY_CONNECTIONS)).isEqualTo(1);
            assertThat(stats.openConnections()).isEqualTo(12);
            client.roundTrip(3); // on the connections it holds
        }
    }

    /**
     * Two thousand idle connections (some never sent a byte, some were served and went quiet, some stopped part-way
     * through a frame) are all closed after connections.max.idle.ms, each logged as IDLE, while the well-behaved
     * client keeps being served; a long-poll fetch longer than the idle time is not cut.
     */
    @Test
    void shouldCloseThousandsOfIdleConnections() throws Exception {
        int idle = 2000;
        broker = TestBrokers.start(dataDir, Map.of("connections.max.idle.ms", "1500"));
        InetSocketAddress address = broker.boundAddress();
        NetworkStats stats = broker.networkStats();
        try (LogCapture logs = new LogCapture();
             WellBehavedClient client = new WellBehavedClient(TestBrokers.bootstrap(broker), "well-behaved")) {
            client.roundTrip(3);
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    TestBrokers.bootstrap(broker)))) {
                admin.createTopics(List.of(new NewTopic("quiet", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
            try (RawConnection longPoll = RawConnection.open(address, READ_TIMEOUT_MS)) {
                long start = System.nanoTime();
                longPoll.sendFrame(RawConnection.serialize(new FetchRequestData().setReplicaId(-1).setMaxWaitMs(4000)
                        .setMinBytes(1).setMaxBytes(1 << 20).setTopics(List.of(new FetchRequestData.FetchTopic()
                                .setTopic("quiet").setPartitions(List.of(new FetchRequestData.FetchPartition()
                                        .setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20))))),
                        (short) 12, 77));
                assertThat(longPoll.readFrame().getInt(0)).as("the long poll's answer").isEqualTo(77);
                assertThat(System.nanoTime() - start).as("it waited past the idle time")
                        .isGreaterThan(TimeUnit.MILLISECONDS.toNanos(3000));
            }
            client.startBackground();
            for (int i = 0; i < idle; i++) {
                RawConnection connection = RawConnection.open(address, READ_TIMEOUT_MS);
                raw.add(connection);
                if (i % 3 == 1) {
                    connection.sendApiVersions(i);
                    connection.readFrame();
                } else if (i % 3 == 2) {
                    connection.sendRaw(ByteBuffer.allocate(6).putInt(100).array()); // 2 of 100 bytes
                }
            }
            for (RawConnection connection : raw) {
                assertThat(connection.awaitClosedByBroker()).as("closed as idle").isTrue();
            }
            assertThat(stats.closed(CloseReason.IDLE)).isGreaterThanOrEqualTo(idle);
            for (RawConnection connection : List.of(raw.get(0), raw.get(1), raw.get(2), raw.get(idle - 1))) {
                assertThat(logs.linesWith("Closing connection from " + connection.localAddress() + " (IDLE)",
                        "no bytes in or out for 1500 ms")).hasSize(1);
            }
            assertThat(stats.closed(CloseReason.TRUNCATED_FRAME)).as("closed by the broker, not the client").isZero();
            assertThat(client.awaitMoreRounds(3, 30_000)).as("served; %s", client.failure()).isTrue();
            assertThat(client.failure()).isNull();
        }
    }

    /** A connection that the broker accepted and serves: it answers an ApiVersions request on it. */
    private static RawConnection servedConnection(String from, InetSocketAddress broker, int correlationId)
            throws IOException {
        RawConnection connection = RawConnection.open(from, broker, READ_TIMEOUT_MS);
        connection.sendApiVersions(correlationId);
        assertThat(connection.readFrame().getInt(0)).isEqualTo(correlationId);
        return connection;
    }

    private static void awaitCount(LongSupplier count, long atLeast) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (count.getAsLong() < atLeast && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        assertThat(count.getAsLong()).isGreaterThanOrEqualTo(atLeast);
    }
}
