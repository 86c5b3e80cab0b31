package dev.millrace.jms;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.utils.Time;

import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.server.BrokerServer;
import dev.millrace.broker.testing.TestPorts;

/**
 * A real Millrace broker in this JVM on 127.0.0.1 (any free port), for the provider's integration tests. Share groups
 * start at the log start ({@code group.share.auto.offset.reset=earliest}), as a JMS queue needs. To restart a broker on
 * the same data directory, pass the same {@code controller.port} (from {@link #freePort}) both times, or start it with
 * {@link #restartable} and use {@link #stop} and {@link #restart} (same port, same data directory: a failover as a
 * client sees it).
 */
final class TestBroker implements AutoCloseable {

    private final Map<String, String> settings;
    private BrokerServer server;

    private TestBroker(BrokerServer server, Map<String, String> settings) {
        this.server = server;
        this.settings = settings;
    }

    /** A broker on fixed (free) client and controller ports, so that it can {@link #restart} where it was. */
    static TestBroker restartable(Path dataDir) throws Exception {
        return start(dataDir, Map.of("port", String.valueOf(freePort())));
    }

    /** Stops the broker (for its clients as a crash: their connections drop); {@link #restart} brings it back. */
    synchronized void stop() {
        if (server != null) {
            server.close();
            server = null;
        }
    }

    /** Starts the broker again on the same ports and data directory (after {@link #stop}). */
    synchronized void restart() throws Exception {
        if (server != null) {
            throw new IllegalStateException("the broker is running");
        }
        BrokerServer again = new BrokerServer(BrokerConfigLoader.fromMap(settings), Time.SYSTEM);
        again.start();
        server = again;
    }

    static TestBroker start(Path dataDir) throws Exception {
        return start(dataDir, Map.of());
    }

    static TestBroker start(Path dataDir, Map<String, String> settings) throws Exception {
        Map<String, String> all = new HashMap<>(Map.of("host", "127.0.0.1", "port", "0",
                "data.dir", dataDir.toString(), "controller.port", String.valueOf(freePort()),
                "offsets.topic.num.partitions", "1", "group.initial.rebalance.delay.ms", "0",
                "transaction.state.log.num.partitions", "1", "group.share.auto.offset.reset", "earliest",
                "delay.topic.num.partitions", "1"));
        all.putAll(settings);
        BrokerServer server = new BrokerServer(BrokerConfigLoader.fromMap(all), Time.SYSTEM);
        server.start();
        return new TestBroker(server, Map.copyOf(all));
    }

    String bootstrap() {
        String port = settings.get("port");
        return "127.0.0.1:" + ("0".equals(port) ? server.boundAddress().getPort() : port);
    }

    /** {@code 127.0.0.1:<port>} of listener {@code name} (a broker started with {@code listeners}). */
    String bootstrap(String listener) {
        return "127.0.0.1:" + server.boundAddress(listener).getPort();
    }

    /** How many requests of {@code api} the broker has handled. */
    synchronized long requestCount(org.apache.kafka.common.protocol.ApiKeys api) {
        return server.apis().requestCount(api);
    }

    MillraceConnectionFactory factory() {
        MillraceConnectionFactory f = new MillraceConnectionFactory(bootstrap());
        f.setRequestTimeoutMs(10_000);
        return f;
    }

    /** A port for a test node to listen on, reserved against every test JVM on this machine ({@link TestPorts}). */
    static int freePort() throws IOException {
        return TestPorts.reserve();
    }

    @Override
    public void close() throws Exception {
        stop();
    }
}
