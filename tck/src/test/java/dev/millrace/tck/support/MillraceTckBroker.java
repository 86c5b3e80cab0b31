package dev.millrace.tck.support;

import java.nio.file.Path;
import java.util.Map;

import org.apache.kafka.common.utils.Time;

import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.server.BrokerServer;

/**
 * A single-node Millrace broker in this JVM on 127.0.0.1 (ephemeral Kafka port). Share groups start at the log start,
 * as JMS queues need (see provider/README.md); internal topics have one partition so the broker starts fast. Not
 * thread-safe: started and closed by the suite's extension.
 */
final class MillraceTckBroker implements TckBroker {

    private final BrokerServer server;

    private MillraceTckBroker(BrokerServer server) {
        this.server = server;
    }

    static MillraceTckBroker start(Path dir) throws Exception {
        Map<String, String> settings = Map.of("host", "127.0.0.1", "port", "0",
                "data.dir", dir.toString(), "controller.port", String.valueOf(TckBroker.freePort()),
                "offsets.topic.num.partitions", "1", "group.initial.rebalance.delay.ms", "0",
                "transaction.state.log.num.partitions", "1", "group.share.auto.offset.reset", "earliest",
                "delay.topic.num.partitions", "1");
        BrokerServer server = new BrokerServer(BrokerConfigLoader.fromMap(settings), Time.SYSTEM);
        server.start();
        return new MillraceTckBroker(server);
    }

    @Override
    public String address() {
        return "127.0.0.1:" + server.boundAddress().getPort();
    }

    @Override
    public String jndiResource() {
        return "jndi.properties";
    }

    @Override
    public void close() throws Exception {
        server.close();
    }

    @Override
    public String toString() {
        return "Millrace broker at " + address();
    }
}
