package dev.millrace.ra.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.server.BrokerServer;
import dev.millrace.broker.testing.TestPorts;

/**
 * One real Millrace broker in the test JVM for the whole container suite, on 127.0.0.1 at a port chosen below the
 * kernel's ephemeral range (15000-31999) and checked bindable. It runs before Arquillian (register it first): its
 * port goes into the system property {@value #PORT_PROPERTY}, which {@code arquillian.xml} hands to the server as
 * {@code -Dmillrace.brokers=127.0.0.1:<port>}. Stopped when the test run ends.
 */
public final class MillraceBrokerExtension implements BeforeAllCallback {

    public static final String PORT_PROPERTY = "millrace.test.port";

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
                .getOrComputeIfAbsent(RunningBroker.class, k -> RunningBroker.start(), RunningBroker.class);
    }

    /** The brokers the test's own clients use. */
    public static String bootstrap() {
        return "127.0.0.1:" + System.getProperty(PORT_PROPERTY);
    }

    /** A broker on loopback; the suite's is closed by JUnit with the root context. */
    public static final class RunningBroker implements AutoCloseable {

        private final BrokerServer server;
        private final int port;

        private RunningBroker(BrokerServer server, int port) {
            this.server = server;
            this.port = port;
        }

        /** The suite's broker, whose port goes into {@value #PORT_PROPERTY}. */
        static RunningBroker start() {
            RunningBroker broker = start(0);
            System.setProperty(PORT_PROPERTY, String.valueOf(broker.port()));
            return broker;
        }

        /**
         * A broker of its own for a test, which tells clients to connect to {@code advertisedPort} (a relay in
         * front of it, say), or to its own port when that is 0.
         */
        public static RunningBroker start(int advertisedPort) {
            try {
                int port = freePort();
                int controllerPort = freePort();
                while (controllerPort == port) {
                    controllerPort = freePort();
                }
                Path dir = Files.createTempDirectory("millrace-ra-it");
                BrokerServer server = new BrokerServer(BrokerConfigLoader.fromMap(Map.ofEntries(
                        Map.entry("host", "127.0.0.1"), Map.entry("port", String.valueOf(port)),
                        Map.entry("data.dir", dir.toString()),
                        Map.entry("controller.port", String.valueOf(controllerPort)),
                        Map.entry("offsets.topic.num.partitions", "1"),
                        Map.entry("group.initial.rebalance.delay.ms", "0"),
                        Map.entry("transaction.state.log.num.partitions", "1"),
                        Map.entry("group.share.auto.offset.reset", "earliest"),
                        Map.entry("delay.topic.num.partitions", "1"),
                        Map.entry("advertised.port", String.valueOf(advertisedPort)))), Time.SYSTEM);
                server.start();
                return new RunningBroker(server, port);
            } catch (Exception e) {
                throw new IllegalStateException("cannot start the test broker: " + e, e);
            }
        }

        /** The port the broker listens on (127.0.0.1). */
        public int port() {
            return port;
        }

        /** A port for a test node to listen on, reserved against every test JVM on this machine ({@link TestPorts}). */
        public static int freePort() throws IOException {
            return TestPorts.reserve();
        }

        @Override
        public void close() {
            server.close();
        }
    }
}
