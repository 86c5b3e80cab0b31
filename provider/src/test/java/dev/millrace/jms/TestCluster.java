package dev.millrace.jms;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.utils.Time;

import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.server.BrokerServer;

/**
 * Three (or more) real Millrace brokers in this JVM on 127.0.0.1, each a voter of the metadata quorum, for the
 * provider's multi-broker tests: ports are chosen free up front (every node must know the voters' ports before any
 * starts), data under one directory per node, and the nodes start together (each one's start waits for the others).
 * {@link #stop} closes one with a controlled shutdown (its partitions' leadership moves to the others first);
 * {@link #close} stops the rest. Share groups start at the log start, as a JMS queue needs.
 *
 * <p>The provider-test counterpart of the broker's own {@code InProcessCluster}. Not thread-safe.
 */
final class TestCluster implements AutoCloseable {

    private final Map<Integer, Integer> kafkaPorts = new LinkedHashMap<>();
    private final Map<Integer, BrokerServer> running = new HashMap<>();
    private final Path root;
    private final String voters;

    private TestCluster(Path root, int nodes) throws IOException {
        this.root = root;
        StringJoiner joiner = new StringJoiner(",");
        for (int id = 1; id <= nodes; id++) {
            kafkaPorts.put(id, freePort());
            joiner.add(id + "@127.0.0.1:" + freePort());
        }
        this.voters = joiner.toString();
    }

    /** Starts {@code nodes} brokers and waits until every one is up. */
    static TestCluster start(Path root, int nodes) throws Exception {
        TestCluster cluster = new TestCluster(root, nodes);
        try {
            List<Integer> ids = new ArrayList<>(cluster.kafkaPorts.keySet());
            List<CompletableFuture<BrokerServer>> starting = new ArrayList<>();
            for (int id : ids) {
                BrokerServer broker = new BrokerServer(BrokerConfigLoader.fromMap(cluster.config(id)), Time.SYSTEM);
                starting.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        broker.start();
                        return broker;
                    } catch (Exception e) {
                        broker.close();
                        throw new IllegalStateException("node " + id + " did not start", e);
                    }
                }));
            }
            Exception failure = null;
            for (int i = 0; i < ids.size(); i++) {
                try {
                    cluster.running.put(ids.get(i), starting.get(i).get(180, TimeUnit.SECONDS));
                } catch (ExecutionException e) {
                    failure = failure == null ? e : failure;
                }
            }
            if (failure != null) {
                throw failure;
            }
        } catch (Exception e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    private Map<String, String> config(int id) throws IOException {
        Path dir = root.resolve("node-" + id);
        Files.createDirectories(dir);
        Map<String, String> all = new HashMap<>(Map.of("host", "127.0.0.1",
                "port", String.valueOf(kafkaPorts.get(id)), "data.dir", dir.toString(), "node.id", String.valueOf(id),
                "controller.quorum.voters", voters, "offsets.topic.num.partitions", "1",
                "group.initial.rebalance.delay.ms", "0", "transaction.state.log.num.partitions", "1",
                "delay.topic.num.partitions", "1", "group.share.auto.offset.reset", "earliest"));
        all.put("broker.session.timeout.ms", "3000");
        all.put("broker.heartbeat.interval.ms", "300");
        all.put("replica.lag.time.max.ms", "3000");
        return all;
    }

    /** Every node's listener, running or not, as a bootstrap list. */
    String bootstrap() {
        StringJoiner joiner = new StringJoiner(",");
        kafkaPorts.values().forEach(port -> joiner.add("127.0.0.1:" + port));
        return joiner.toString();
    }

    /** A factory for the whole cluster, with a 10 s request timeout and a 60 s failover window. */
    MillraceConnectionFactory factory() {
        MillraceConnectionFactory f = new MillraceConnectionFactory(bootstrap());
        f.setRequestTimeoutMs(10_000);
        f.setFailoverTimeoutMs(60_000);
        return f;
    }

    /** Closes node {@code id} with a controlled shutdown. */
    void stop(int id) {
        BrokerServer broker = running.remove(id);
        if (broker != null) {
            broker.close();
        }
    }

    /** Starts node {@code id} again (after {@link #stop}) on its port and data directory; waits until it is up. */
    void restart(int id) throws Exception {
        if (running.containsKey(id)) {
            throw new IllegalStateException("node " + id + " still runs");
        }
        BrokerServer broker = new BrokerServer(BrokerConfigLoader.fromMap(config(id)), Time.SYSTEM);
        try {
            broker.start();
        } catch (Exception e) {
            broker.close();
            throw e;
        }
        running.put(id, broker);
    }

    @Override
    public void close() {
        for (int id : new ArrayList<>(running.keySet())) {
            stop(id);
        }
    }

    private static int freePort() throws IOException {
        return TestBroker.freePort();
    }
}
