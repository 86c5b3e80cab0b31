package dev.millrace.samples.testbroker;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.utils.Time;

import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.server.BrokerServer;

/**
 * A real Millrace broker in the test's JVM on {@code 127.0.0.1} (a free port), for the samples' tests. It keeps the
 * defaults of {@code bin/millrace server} that a sample could notice (in particular share groups start at the log end,
 * {@code group.share.auto.offset.reset=latest}: a queue works only because the JMS provider configures its group),
 * and shrinks only what makes a small test slow (one partition per internal topic, no initial rebalance delay).
 *
 * <p>Thread-safe; {@link #close} stops the broker and all its threads.
 */
public final class SampleBroker implements AutoCloseable {

    private final BrokerServer server;

    private SampleBroker(BrokerServer server) {
        this.server = server;
    }

    /** Starts a broker whose data lives under {@code dataDir}. */
    public static SampleBroker start(Path dataDir) throws Exception {
        Map<String, String> settings = new HashMap<>(Map.of("host", "127.0.0.1", "port", "0",
                "data.dir", dataDir.toString(), "controller.port", String.valueOf(freePort()),
                "offsets.topic.num.partitions", "1", "group.initial.rebalance.delay.ms", "0",
                "transaction.state.log.num.partitions", "1", "delay.topic.num.partitions", "1"));
        BrokerServer server = new BrokerServer(BrokerConfigLoader.fromMap(settings), Time.SYSTEM);
        server.start();
        return new SampleBroker(server);
    }

    /** The bootstrap address, {@code 127.0.0.1:<port>}: what a sample takes on its command line. */
    public String bootstrap() {
        return "127.0.0.1:" + server.boundAddress().getPort();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    @Override
    public void close() throws Exception {
        server.close();
    }
}
