package dev.millrace.broker.server;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.kafka.common.utils.Time;

import dev.millrace.broker.config.BrokerConfigLoader;

/**
 * A cluster of brokers in this JVM, each a voter of the metadata quorum, on 127.0.0.1 with ports chosen free up
 * front (voter ports must be known to every node before any starts), data under one directory per node. Nodes start
 * together (each one's start waits for the others' registrations); {@link #stop} closes one with a controlled
 * shutdown, {@link #start} brings it back with the same ports and data. {@link #addBroker} starts a further node
 * that is not a voter (a broker only, whose metadata learner gets a port of its own) in the running cluster.
 *
 * <p>For tests; not thread-safe.
 */
final class InProcessCluster implements AutoCloseable {

    private final Path root;
    private final Map<String, String> settings;
    private final Map<Integer, Integer> kafkaPorts = new LinkedHashMap<>();
    private final Map<Integer, Integer> voterPorts = new LinkedHashMap<>();
    private final Map<Integer, Integer> learnerPorts = new LinkedHashMap<>();
    private final Map<Integer, BrokerServer> running = new HashMap<>();
    /** Settings of single nodes, over {@link #settings}. */
    private final Map<Integer, Map<String, String>> nodeSettings = new HashMap<>();
    private final String voters;
    /** Notified on every metadata change of every node, so that {@link #awaitCondition} re-checks at once. */
    private final Object changes = new Object();

    private InProcessCluster(Path root, int nodes, Map<String, String> settings) throws IOException {
        this.root = root;
        this.settings = Map.copyOf(settings);
        StringJoiner joiner = new StringJoiner(",");
        for (int id = 1; id <= nodes; id++) {
            kafkaPorts.put(id, freePort());
            voterPorts.put(id, freePort());
            joiner.add(id + "@127.0.0.1:" + voterPorts.get(id));
        }
        this.voters = joiner.toString();
    }

    /** Starts {@code nodes} brokers with short session timeouts and one-partition internal topics, then settings. */
    static InProcessCluster start(Path root, int nodes, Map<String, String> settings) throws Exception {
        InProcessCluster cluster = new InProcessCluster(root, nodes, settings);
        try {
            cluster.startAll(new ArrayList<>(cluster.kafkaPorts.keySet()));
        } catch (Exception e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    private void startAll(List<Integer> ids) throws Exception {
        List<CompletableFuture<BrokerServer>> starting = new ArrayList<>();
        for (int id : ids) {
            BrokerServer broker = new BrokerServer(BrokerConfigLoader.fromMap(config(id)), Time.SYSTEM);
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    broker.start();
                    broker.controller().registerListener((previous, current) -> {
                        synchronized (changes) {
                            changes.notifyAll();
                        }
                    });
                    return broker;
                } catch (Exception e) {
                    broker.close();
                    throw new IllegalStateException("Node " + id + " did not start", e);
                }
            }));
        }
        Exception failure = null;
        for (int i = 0; i < ids.size(); i++) {
            try {
                running.put(ids.get(i), starting.get(i).get(180, TimeUnit.SECONDS));
            } catch (ExecutionException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private Map<String, String> config(int id) throws IOException {
        Path dir = root.resolve("node-" + id);
        Files.createDirectories(dir);
        Map<String, String> all = new HashMap<>(Map.of("host", "127.0.0.1", "port", String.valueOf(kafkaPorts.get(id)),
                "data.dir", dir.toString(), "node.id", String.valueOf(id), "controller.quorum.voters", voters,
                "offsets.topic.num.partitions", "1", "group.initial.rebalance.delay.ms", "0",
                "transaction.state.log.num.partitions", "1", "delay.topic.num.partitions", "1"));
        all.put("broker.session.timeout.ms", "3000");
        all.put("broker.heartbeat.interval.ms", "300");
        all.put("replica.lag.time.max.ms", "3000");
        if (learnerPorts.containsKey(id)) {
            all.put("controller.port", String.valueOf(learnerPorts.get(id)));
        }
        all.putAll(settings);
        all.putAll(nodeSettings.getOrDefault(id, Map.of()));
        return all;
    }

    BrokerServer broker(int id) {
        BrokerServer broker = running.get(id);
        if (broker == null) {
            throw new IllegalStateException("Node " + id + " is not running");
        }
        return broker;
    }

    /** The voters' {@code controller.quorum.voters} setting, as every node of this cluster has it. */
    String voters() {
        return voters;
    }

    List<Integer> nodeIds() {
        return List.copyOf(kafkaPorts.keySet());
    }

    List<Integer> runningIds() {
        return running.keySet().stream().sorted().toList();
    }

    /** Node {@code id}'s listener, {@code host:port}. */
    String address(int id) {
        return "127.0.0.1:" + kafkaPorts.get(id);
    }

    /** Every node's listener, running or not, as a bootstrap list. */
    String bootstrap() {
        StringJoiner joiner = new StringJoiner(",");
        kafkaPorts.values().forEach(port -> joiner.add("127.0.0.1:" + port));
        return joiner.toString();
    }

    /** Closes node {@code id} (a controlled shutdown when it is unfenced). */
    void stop(int id) {
        BrokerServer broker = running.remove(id);
        if (broker != null) {
            broker.close();
        }
    }

    /** Starts node {@code id} again with its ports and data directory; waits until it is unfenced. */
    void start(int id) throws Exception {
        if (running.containsKey(id)) {
            throw new IllegalStateException("Node " + id + " is already running");
        }
        startAll(List.of(id));
    }

    /** Starts the stopped nodes {@code ids} together (after all stopped, no single voter has a quorum of its own). */
    void startTogether(List<Integer> ids) throws Exception {
        for (int id : ids) {
            if (running.containsKey(id)) {
                throw new IllegalStateException("Node " + id + " is already running");
            }
        }
        startAll(ids);
    }

    /**
     * Starts node {@code id}, not in the voter list, in the running cluster: a broker only, with its own Kafka and
     * metadata learner ports; waits until it is registered and unfenced. {@link #stop} and {@link #start} work for
     * it as for the voters.
     */
    void addBroker(int id) throws Exception {
        addBroker(id, Map.of());
    }

    /** {@link #addBroker(int)} with {@code overrides} over the cluster's settings for this node alone. */
    void addBroker(int id, Map<String, String> overrides) throws Exception {
        if (kafkaPorts.containsKey(id)) {
            throw new IllegalStateException("Node " + id + " is already part of the cluster");
        }
        nodeSettings.put(id, Map.copyOf(overrides));
        kafkaPorts.put(id, freePort());
        learnerPorts.put(id, freePort());
        startAll(List.of(id));
    }

    /**
     * Waits until {@code condition} holds: re-checked at every metadata change of any node, and at least every
     * 50 ms for conditions that metadata does not signal (log end offsets).
     *
     * @throws AssertionError naming {@code what} when it does not hold within {@code timeout}
     */
    void awaitCondition(BooleanSupplier condition, String what, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (changes) {
            while (!condition.getAsBoolean()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("Timed out after " + timeout + " waiting for " + what);
                }
                changes.wait(Math.max(1, Math.min(50, TimeUnit.NANOSECONDS.toMillis(left))));
            }
        }
    }

    @Override
    public void close() {
        for (int id : new ArrayList<>(running.keySet())) {
            stop(id);
        }
    }

    private static int freePort() throws IOException {
        return TestBrokers.freePort();
    }
}
