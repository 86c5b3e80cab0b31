package dev.millrace.bench.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.jms.Connection;
import jakarta.jms.Session;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import dev.millrace.jms.MillraceConnectionFactory;

/**
 * Issue 23's benchmark: how long a consumer sees no message after the SIGKILL of the broker that leads its
 * partition, for three kinds of consumer on one three-node Millrace cluster (replication factor 3,
 * {@code min.insync.replicas=2}) reading one single-partition topic that a producer writes at a steady rate: a JMS
 * queue consumer ({@code MessageListener}, AUTO_ACKNOWLEDGE), a Kafka consumer group member and a
 * {@code KafkaShareConsumer}. For each kill: gap = the receipt of the first message produced after the kill (by its
 * record timestamp, the producer's clock, which is this JVM's) - the kill; messages read ahead before the kill do
 * not count, so a consumer's buffer cannot hide the failover. Also the
 * messages each consumer received per second in a phase without kills and in the phase with kills (throughput
 * during chaos as a share of throughput without).
 *
 * <pre>
 * java -cp bench/target/millrace-bench.jar dev.millrace.bench.e2e.ConsumerFailoverGap [--kills 10] [--rate 500]
 *      [--set name=value ...] [--home .] [--keep]
 * </pre>
 * {@code --set} adds a broker setting to every node (e.g. {@code broker.session.timeout.ms=2000}).
 */
public final class ConsumerFailoverGap {

    private static final String TOPIC = "failover-gap";
    private static final int NODES = 3;
    private static final List<String> KINDS = List.of("jms queue", "kafka group", "kafka share");

    private final Path home;
    private final Path workDir;
    private final Cleanup cleanup;
    private final List<String> settings;
    /** Per consumer kind: the nanoTime of its latest message, and how many it has had. */
    private final Map<String, AtomicLong> lastReceived = new LinkedHashMap<>();
    /** The wall-clock ms of the latest kill (Long.MAX_VALUE before the first). */
    private volatile long killedAtMillis = Long.MAX_VALUE;
    private final Map<String, AtomicLong> received = new LinkedHashMap<>();
    private volatile boolean running = true;

    private ConsumerFailoverGap(Path home, Path workDir, Cleanup cleanup, List<String> settings) {
        this.home = home;
        this.workDir = workDir;
        this.cleanup = cleanup;
        this.settings = settings;
        for (String kind : KINDS) {
            lastReceived.put(kind, new AtomicLong());
            received.put(kind, new AtomicLong());
        }
    }

    public static void main(String[] args) throws Exception {
        int kills = 10;
        int rate = 500;
        long phaseSeconds = 30;
        Path home = Path.of(".").toAbsolutePath().normalize();
        boolean keep = false;
        List<String> settings = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--kills" -> kills = Integer.parseInt(args[++i]);
                case "--rate" -> rate = Integer.parseInt(args[++i]);
                case "--phase-seconds" -> phaseSeconds = Long.parseLong(args[++i]);
                case "--set" -> settings.add(args[++i]);
                case "--home" -> home = Path.of(args[++i]);
                case "--keep" -> keep = true;
                default -> throw new IllegalArgumentException("unknown option " + args[i] + "; options: --kills N, "
                        + "--rate N, --phase-seconds N, --set name=value, --home DIR, --keep");
            }
        }
        Path workDir = Files.createTempDirectory("millrace-failover-gap");
        Cleanup cleanup = new Cleanup(workDir, keep);
        Runtime.getRuntime().addShutdownHook(new Thread(cleanup));
        try {
            new ConsumerFailoverGap(home, workDir, cleanup, settings).run(kills, rate, phaseSeconds);
        } finally {
            cleanup.run();
        }
    }

    private void run(int kills, int rate, long phaseSeconds) throws Exception {
        BrokerNode[] nodes = startCluster();
        String bootstrap = ClusterWaits.bootstrap(nodes);
        Properties adminConfig = new Properties();
        adminConfig.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(adminConfig)) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) NODES)
                    .configs(Map.of("min.insync.replicas", "2")))).all().get(2, TimeUnit.MINUTES);
            List<Thread> threads = new ArrayList<>();
            threads.add(daemon("gap-producer", () -> produce(bootstrap, rate)));
            threads.add(daemon("gap-group", () -> consumeGroup(bootstrap)));
            threads.add(daemon("gap-share", () -> consumeShare(bootstrap)));
            MillraceConnectionFactory factory = new MillraceConnectionFactory(bootstrap);
            try (Connection connection = factory.createConnection()) {
                Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
                session.createConsumer(session.createQueue(TOPIC)).setMessageListener(m -> {
                    try {
                        note("jms queue", m.getJMSTimestamp());
                    } catch (jakarta.jms.JMSException e) {
                        throw new IllegalStateException(e);
                    }
                });
                connection.start();
                threads.forEach(Thread::start);
                awaitAllReceiving(Duration.ofMinutes(2));
                Map<String, Long> calm = countOver(phaseSeconds, () -> { });
                Map<String, List<Double>> gaps = new LinkedHashMap<>();
                KINDS.forEach(k -> gaps.put(k, new ArrayList<>()));
                Map<String, Long> chaos = countOver(0, () -> {
                    for (int kill = 1; kill <= kills; kill++) {
                        killLeader(admin, nodes, kill, kills, gaps);
                    }
                });
                report(kills, rate, phaseSeconds, calm, chaos, lastPhaseSeconds, gaps);
            } finally {
                running = false;
                for (Thread t : threads) {
                    t.join(10_000);
                }
            }
        } finally {
            for (BrokerNode node : nodes) {
                node.stop();
            }
        }
    }

    /** How long the latest {@link #countOver} phase took, in whole seconds. */
    private long lastPhaseSeconds;

    /** Counts each kind's messages while {@code during} runs (or for {@code seconds} when it does nothing). */
    private Map<String, Long> countOver(long seconds, ThrowingRunnable during) throws Exception {
        Map<String, Long> before = snapshot();
        long started = System.nanoTime();
        if (seconds > 0) {
            Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
        } else {
            during.run();
        }
        long ended = System.nanoTime();
        Map<String, Long> after = snapshot();
        Map<String, Long> perSecond = new LinkedHashMap<>();
        double elapsed = (ended - started) / 1e9;
        lastPhaseSeconds = Math.round(elapsed);
        for (String kind : KINDS) {
            perSecond.put(kind, Math.round((after.get(kind) - before.get(kind)) / elapsed));
        }
        return perSecond;
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    private Map<String, Long> snapshot() {
        Map<String, Long> counts = new LinkedHashMap<>();
        received.forEach((k, v) -> counts.put(k, v.get()));
        return counts;
    }

    private void killLeader(Admin admin, BrokerNode[] nodes, int kill, int kills, Map<String, List<Double>> gaps)
            throws Exception {
        ClusterWaits.awaitFullIsr(admin, List.of(TOPIC), NODES, Duration.ofMinutes(3), "Millrace");
        awaitAllReceiving(Duration.ofMinutes(2));
        int leader = ClusterWaits.leaderOf(admin, TOPIC, 0);
        BrokerNode victim = nodes[leader - 1];
        lastReceived.values().forEach(v -> v.set(0));
        killedAtMillis = System.currentTimeMillis();
        long killedAt = System.nanoTime();
        victim.kill();
        long deadline = killedAt + TimeUnit.MINUTES.toNanos(2);
        Map<String, Double> gap = new LinkedHashMap<>();
        while (gap.size() < KINDS.size() && System.nanoTime() < deadline) {
            for (String kind : KINDS) {
                long last = lastReceived.get(kind).get();
                if (!gap.containsKey(kind) && last > killedAt) {
                    gap.put(kind, (last - killedAt) / 1e6);
                }
            }
            Thread.sleep(5);
        }
        for (String kind : KINDS) {
            gaps.get(kind).add(gap.get(kind));
        }
        System.out.printf(Locale.ROOT, "kill %d of %d: node %d (leader of %s-0): gaps %s%n", kill, kills, leader,
                TOPIC, gap);
        victim.stop();
        nodes[leader - 1] = victim.relaunch();
    }

    private void report(int kills, int rate, long phaseSeconds, Map<String, Long> calm, Map<String, Long> chaos,
                        long chaosSeconds, Map<String, List<Double>> gaps) {
        System.out.printf(Locale.ROOT, "%nConsumerFailoverGap: 3 Millrace nodes, RF 3, min.insync.replicas=2, "
                + "%d msg/s, %d kills of the partition leader, settings %s%n", rate, kills, settings);
        System.out.println("| consumer | gap p50 (ms) | gap max (ms) | no message within 2 min | msg/s without kills ("
                + phaseSeconds + " s) | msg/s with kills (" + chaosSeconds + " s) | ratio |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|");
        for (String kind : KINDS) {
            List<Double> measured = gaps.get(kind).stream().filter(g -> g != null).sorted().toList();
            long missing = gaps.get(kind).stream().filter(g -> g == null).count();
            double p50 = measured.isEmpty() ? Double.NaN : measured.get(measured.size() / 2);
            double max = measured.isEmpty() ? Double.NaN : measured.get(measured.size() - 1);
            System.out.printf(Locale.ROOT, "| %s | %.0f | %.0f | %d | %d | %d | %.2f |%n", kind, p50, max, missing,
                    calm.get(kind), chaos.get(kind), chaos.get(kind) / (double) Math.max(1, calm.get(kind)));
        }
    }

    private void awaitAllReceiving(Duration timeout) throws InterruptedException {
        Map<String, Long> before = snapshot();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (KINDS.stream().anyMatch(k -> received.get(k).get() <= before.get(k))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not every consumer receives: " + snapshot() + " (before " + before
                        + ")");
            }
            Thread.sleep(10);
        }
    }

    /** A message of {@code kind} produced at {@code timestampMillis} arrived now. */
    private void note(String kind, long timestampMillis) {
        if (timestampMillis >= killedAtMillis) {
            lastReceived.get(kind).compareAndSet(0, System.nanoTime()); // the first produced after the kill
        }
        received.get(kind).incrementAndGet();
    }

    private void produce(String bootstrap, int rate) {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 300_000);
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        byte[] value = new byte[256];
        long interval = TimeUnit.SECONDS.toNanos(1) / rate;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            long next = System.nanoTime();
            while (running) {
                producer.send(new ProducerRecord<>(TOPIC, 0, null, value));
                next += interval;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                } else if (wait < -TimeUnit.SECONDS.toNanos(1)) {
                    next = System.nanoTime(); // blocked through a failover: do not send a burst to catch up
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Properties consumerConfig(String bootstrap, String group) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return config;
    }

    private void consumeGroup(String bootstrap) {
        Properties config = consumerConfig(bootstrap, "failover-gap-group");
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
            consumer.subscribe(List.of(TOPIC));
            while (running) {
                consumer.poll(Duration.ofMillis(100)).forEach(r -> note("kafka group", r.timestamp()));
            }
        }
    }

    private void consumeShare(String bootstrap) {
        try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(consumerConfig(bootstrap,
                "failover-gap-share"))) {
            consumer.subscribe(List.of(TOPIC));
            while (running) {
                consumer.poll(Duration.ofMillis(100)).forEach(r -> note("kafka share", r.timestamp()));
            }
        }
    }

    private BrokerNode[] startCluster() throws IOException, InterruptedException {
        int[] ports = new int[NODES];
        List<String> voters = new ArrayList<>();
        for (int i = 0; i < NODES; i++) {
            ports[i] = Cleanup.freePort();
            voters.add((i + 1) + "@127.0.0.1:" + Cleanup.freePort());
        }
        BrokerNode[] nodes = new BrokerNode[NODES];
        List<Thread> starters = new ArrayList<>();
        List<Exception> failures = new ArrayList<>();
        for (int i = 0; i < NODES; i++) {
            int index = i;
            List<String> nodeSettings = new ArrayList<>(List.of("node.id=" + (i + 1),
                    "controller.quorum.voters=" + String.join(",", voters), "min.insync.replicas=2",
                    "default.replication.factor=3", "group.share.auto.offset.reset=latest"));
            nodeSettings.addAll(settings);
            Path dir = Files.createDirectories(workDir.resolve("node-" + (i + 1)));
            Thread starter = daemon("start-node-" + (i + 1), () -> {
                try {
                    nodes[index] = BrokerNode.startMillrace(home, dir, "Millrace-" + (index + 1), ports[index],
                            BrokerComparison.BROKER_JVM, cleanup, nodeSettings);
                } catch (Exception e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            });
            starter.start();
            starters.add(starter);
        }
        for (Thread starter : starters) {
            starter.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("the cluster did not start", failures.get(0));
        }
        return nodes;
    }

    private static Thread daemon(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        return thread;
    }
}
