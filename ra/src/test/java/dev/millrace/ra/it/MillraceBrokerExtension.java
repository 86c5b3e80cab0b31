package dev.millrace.ra.it;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.server.BrokerServer;

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

    /** The broker; closed by JUnit with the root context. */
    static final class RunningBroker implements AutoCloseable {

        private final BrokerServer server;

        private RunningBroker(BrokerServer server) {
            this.server = server;
        }

        static RunningBroker start() {
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
                        Map.entry("delay.topic.num.partitions", "1"))), Time.SYSTEM);
                server.start();
                System.setProperty(PORT_PROPERTY, String.valueOf(port));
                return new RunningBroker(server);
            } catch (Exception e) {
                throw new IllegalStateException("cannot start the test broker: " + e, e);
            }
        }

        private static int freePort() throws IOException {
            while (true) {
                int port = 15_000 + ThreadLocalRandom.current().nextInt(17_000);
                try (ServerSocket socket = new ServerSocket()) {
                    socket.setReuseAddress(false);
                    socket.bind(new InetSocketAddress("127.0.0.1", port));
                    return port;
                } catch (IOException taken) {
                    // in use: try another
                }
            }
        }

        @Override
        public void close() {
            server.close();
        }
    }
}
