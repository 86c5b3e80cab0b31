package dev.millrace.bench.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Three Millrace nodes against three Apache Kafka 4.4 KRaft nodes (issue 22's benchmark), one cluster at a time,
 * in one run on this machine.
 *
 * <p>Each cluster is three processes on 127.0.0.1 with the same JVM options ({@link BrokerComparison#BROKER_JVM}),
 * every node broker and controller voter at once: Millrace with {@code node.id} and {@code controller.quorum.voters},
 * Kafka in combined mode ({@code process.roles=broker,controller}, three voters, one cluster id, its defaults
 * otherwise). Every topic has {@code --partitions} partitions (3 by default), replication factor 3 and
 * {@code min.insync.replicas=2}. For each cluster in turn (Millrace first unless {@code --kafka-first}):
 * <ol>
 *   <li>an unmeasured warm-up of ProducerPerformance, then ProducerPerformance unthrottled (1 KiB records,
 *       acks=all, enable.idempotence=true) and ConsumerPerformance reading that topic from its start;</li>
 *   <li>ProducerPerformance at {@code --fixed-rate} records/s (acks=all), its first tenth left out as the tool's
 *       warm-up, for the send-to-acknowledgement latency p50/p99/max;</li>
 *   <li>failover: a producer in this JVM (acks=all, idempotent, retries, linger 0) sends one 1 KiB record every
 *       millisecond to partition 0 of a topic of its own; {@code --kills} times, the node leading that partition
 *       gets SIGKILL. The figure is the time from the kill to the acknowledgement of the first record sent after
 *       the kill (every record sent earlier is retried by the same idempotent producer and acknowledged in order
 *       before it, so this is when the new leader accepts writes). The killed node is then started again with the
 *       same command and data, and the next kill waits until every partition's ISR has three replicas again.</li>
 * </ol>
 * Then the cluster's nodes get SIGTERM, and the next cluster starts. Every process is stopped, and the work
 * directory deleted, at the end, on failure and on Ctrl-C ({@link Cleanup}).
 *
 * <pre>
 *   java -cp bench/target/millrace-bench.jar dev.millrace.bench.e2e.ClusterComparison [options]
 * </pre>
 */
public final class ClusterComparison {

    static final int NODES = 3;
    static final short REPLICATION = 3;
    static final Map<String, String> TOPIC_CONFIG = Map.of("min.insync.replicas", "2");
    static final String WARMUP_TOPIC = "cluster-warmup";
    static final String PRODUCE_TOPIC = "cluster-produce";
    static final String FIXED_TOPIC = "cluster-fixed";
    static final String FAILOVER_TOPIC = "cluster-failover";

    /** How often the failover producer sends a record. */
    static final long FAILOVER_SEND_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final Options options;
    private final Path workDir;
    private final Cleanup cleanup;
    private final String peerClasspath;
    private final long start = System.nanoTime();

    private ClusterComparison(Options options, Path workDir, Cleanup cleanup, String peerClasspath) {
        this.options = options;
        this.workDir = workDir;
        this.cleanup = cleanup;
        this.peerClasspath = peerClasspath;
    }

    /** What to run; see {@link #usage()}. */
    record Options(long records, long fixedRecords, long fixedRate, long warmupRecords, int partitions, int kills,
                   boolean failoverOnly, boolean kafkaFirst, List<String> only, List<String> millraceSettings, Path home, boolean keep) {

        static Options parse(String[] args) {
            long records = 1_000_000;
            long fixedRecords = 200_000;
            long fixedRate = 10_000;
            long warmup = 300_000;
            int partitions = 3;
            int kills = 10;
            boolean kafkaFirst = false;
            boolean failoverOnly = false;
            List<String> only = List.of(ResultTable.MILLRACE, ResultTable.KAFKA);
            List<String> millraceSettings = new ArrayList<>();
            Path home = Path.of("").toAbsolutePath();
            boolean keep = false;
            for (int i = 0; i < args.length; i++) {
                String name = args[i];
                switch (name) {
                    case "-h", "--help" -> {
                        return null;
                    }
                    case "--kafka-first" -> kafkaFirst = true;
                    case "--keep" -> keep = true;
                    case "--failover-only" -> failoverOnly = true;
                    default -> {
                        if (i + 1 >= args.length) {
                            throw new IllegalArgumentException("missing value of " + name);
                        }
                        String value = args[++i];
                        switch (name) {
                            case "--records" -> records = positive(name, value);
                            case "--fixed-records" -> fixedRecords = positive(name, value);
                            case "--fixed-rate" -> fixedRate = positive(name, value);
                            case "--warmup-records" -> warmup = Long.parseLong(value);
                            case "--partitions" -> partitions = Math.toIntExact(positive(name, value));
                            case "--kills" -> kills = Math.toIntExact(Long.parseLong(value));
                            case "--millrace-set" -> {
                                if (!value.contains("=")) {
                                    throw new IllegalArgumentException("--millrace-set needs NAME=VALUE: " + value);
                                }
                                millraceSettings.add(value);
                            }
                            case "--only" -> {
                                String side = value.trim().toLowerCase(Locale.ROOT);
                                only = switch (side) {
                                    case "millrace" -> List.of(ResultTable.MILLRACE);
                                    case "kafka" -> List.of(ResultTable.KAFKA);
                                    default -> throw new IllegalArgumentException(
                                            "--only takes millrace or kafka: " + value);
                                };
                            }
                            case "--home" -> home = Path.of(value).toAbsolutePath();
                            default -> throw new IllegalArgumentException("unexpected argument: " + name);
                        }
                    }
                }
            }
            return new Options(records, fixedRecords, fixedRate, warmup, partitions, kills, failoverOnly, kafkaFirst, only,
                    List.copyOf(millraceSettings), home, keep);
        }

        private static long positive(String name, String value) {
            long parsed = Long.parseLong(value.replace("_", "").replace(",", ""));
            if (parsed <= 0) {
                throw new IllegalArgumentException(name + " must be positive: " + value);
            }
            return parsed;
        }
    }

    /** One cluster's figures. Failover times in milliseconds, one per kill; null where a kill did not recover. */
    static final class SideResult {
        PerfResult produce;
        PerfResult consume;
        PerfResult fixed;
        final List<Double> failoverMs = new ArrayList<>();
        final List<String> notes = new ArrayList<>();
    }

    public static void main(String[] args) {
        // The producer's retries during a failover log at WARN; the bench jar's simplelogger.properties sets
        // org.apache.kafka to warn, which a system property overrides.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka", "error");
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            usage();
            System.exit(2);
            return;
        }
        if (options == null) {
            usage();
            return;
        }
        Cleanup.runAndExit("millrace-cluster-", options.keep(), (workDir, cleanup) -> {
            Path classpathFile = options.home().resolve("bench/target/kafka-peer.classpath");
            if (!Files.isRegularFile(classpathFile)) {
                throw new IllegalStateException(classpathFile + " not found; build first");
            }
            String peerClasspath = Files.readString(classpathFile, StandardCharsets.UTF_8).strip();
            return new ClusterComparison(options, workDir, cleanup, peerClasspath).run();
        });
    }

    private int run() throws IOException, InterruptedException {
        System.out.println("Three Millrace nodes vs three Apache Kafka 4.4 KRaft nodes (" + Instant.now() + ")");
        System.out.println("  node JVMs: " + String.join(" ", BrokerComparison.BROKER_JVM) + "; tool JVMs: "
                + String.join(" ", PerfTool.TOOL_JVM.subList(0, 3)));
        System.out.println("  topics: " + options.partitions() + " partitions, replication factor " + REPLICATION
                + ", min.insync.replicas=2; 1 KiB records, acks=all, idempotent producers");
        System.out.println("  records " + options.records() + ", warm-up " + options.warmupRecords() + ", fixed rate "
                + options.fixedRate() + "/s for " + options.fixedRecords() + " records, kills " + options.kills());
        System.out.println("  Millrace settings: " + (options.millraceSettings().isEmpty() ? "defaults"
                : String.join(" ", options.millraceSettings())) + "; Kafka: defaults");
        System.out.println("  work directory: " + workDir);
        List<String> order = new ArrayList<>(options.kafkaFirst()
                ? List.of(ResultTable.KAFKA, ResultTable.MILLRACE) : List.of(ResultTable.MILLRACE, ResultTable.KAFKA));
        order.retainAll(options.only());
        Map<String, SideResult> results = new LinkedHashMap<>();
        for (String side : order) {
            results.put(side, runSide(side));
        }
        printSummary(results);
        return 0;
    }

    private SideResult runSide(String side) throws IOException, InterruptedException {
        SideResult result = new SideResult();
        progress("starting three " + side + " nodes");
        BrokerNode[] nodes = startCluster(side);
        try {
            String bootstrap = ClusterWaits.bootstrap(nodes);
            progress(side + " nodes listen on " + bootstrap);
            for (String topic : List.of(WARMUP_TOPIC, PRODUCE_TOPIC, FIXED_TOPIC, FAILOVER_TOPIC)) {
                nodes[0].createTopic(topic, options.partitions(), REPLICATION, TOPIC_CONFIG);
            }
            progress(side + ": topics created, every ISR full");
            String key = side.toLowerCase(Locale.ROOT);
            if (!options.failoverOnly()) {
                measureTools(side, key, bootstrap, result);
            }
            if (options.kills() > 0) {
                failover(side, nodes, result);
            }
        } finally {
            for (int i = nodes.length - 1; i >= 0; i--) {
                if (nodes[i] != null) {
                    int code = nodes[i].stop();
                    progress("stopped " + nodes[i].name() + " (exit code " + code + ")");
                }
            }
        }
        return result;
    }

    /** Parts 1 and 2: the perf tools, unthrottled produce and consume, then produce at the fixed rate. */
    private void measureTools(String side, String key, String bootstrap, SideResult result)
            throws IOException, InterruptedException {
        if (options.warmupRecords() > 0) {
            PerfResult warm = tool(key + "-warmup", PerfTool.producerArgs(bootstrap, WARMUP_TOPIC,
                    options.warmupRecords(), 0, 1024, -1, "all", true), options.warmupRecords());
            progress(side + " warm-up: " + describe(warm));
        }
        settle();
        result.produce = tool(key + "-produce", PerfTool.producerArgs(bootstrap, PRODUCE_TOPIC,
                options.records(), 0, 1024, -1, "all", true), options.records());
        progress(side + " produce: " + describe(result.produce));
        settle();
        result.consume = tool(key + "-consume", PerfTool.consumerArgs(bootstrap, PRODUCE_TOPIC,
                options.records(), "cluster-consume-" + key), options.records());
        progress(side + " consume: " + describe(result.consume));
        settle();
        result.fixed = tool(key + "-fixed", PerfTool.producerArgs(bootstrap, FIXED_TOPIC,
                options.fixedRecords(), options.fixedRecords() / 10, 1024, options.fixedRate(), "all", true),
                options.fixedRecords());
        progress(side + " at " + options.fixedRate() + " records/s: " + describe(result.fixed));
    }

    /** Starts the three nodes of one side at once (a voter needs a quorum before it listens) and waits for each. */
    private BrokerNode[] startCluster(String side) throws IOException, InterruptedException {
        int[] ports = new int[NODES];
        int[] controllerPorts = new int[NODES];
        List<String> voters = new ArrayList<>();
        for (int i = 0; i < NODES; i++) {
            ports[i] = Cleanup.freePort();
            controllerPorts[i] = Cleanup.freePort();
            voters.add((i + 1) + "@127.0.0.1:" + controllerPorts[i]);
        }
        String voterList = String.join(",", voters);
        String clusterId = Uuid.randomUuid().toString();
        BrokerNode[] nodes = new BrokerNode[NODES];
        List<Thread> starters = new ArrayList<>();
        List<Exception> failures = new ArrayList<>();
        for (int i = 0; i < NODES; i++) {
            int index = i;
            Path dir = Files.createDirectories(workDir.resolve(side.toLowerCase(Locale.ROOT) + "-" + (i + 1)));
            String name = side + "-" + (i + 1);
            // The nodes start concurrently: a voter waits for a quorum before it listens on its Kafka port.
            Thread starter = new Thread(() -> {
                try {
                    if (side.equals(ResultTable.MILLRACE)) {
                        List<String> settings = new ArrayList<>(List.of("node.id=" + (index + 1),
                                "controller.quorum.voters=" + voterList, "min.insync.replicas=2"));
                        settings.addAll(options.millraceSettings());
                        nodes[index] = BrokerNode.startMillrace(options.home(), dir, name, ports[index],
                                BrokerComparison.BROKER_JVM, cleanup, settings);
                    } else {
                        nodes[index] = BrokerNode.startKafka(peerClasspath, dir, name, BrokerComparison.BROKER_JVM,
                                cleanup, index + 1, ports[index], controllerPorts[index], voterList, clusterId,
                                List.of("min.insync.replicas=2"));
                    }
                } catch (Exception e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            }, "start-" + name);
            starter.start();
            starters.add(starter);
        }
        for (Thread starter : starters) {
            starter.join();
        }
        if (!failures.isEmpty()) {
            for (BrokerNode node : nodes) {
                if (node != null) {
                    node.stop();
                }
            }
            IllegalStateException failure = new IllegalStateException(side + " cluster did not start",
                    failures.get(0));
            throw failure;
        }
        return nodes;
    }

    private void failover(String side, BrokerNode[] nodes, SideResult result) throws InterruptedException,
            IOException {
        AtomicLong killedAt = new AtomicLong(Long.MAX_VALUE);
        AtomicLong firstAckAfterKill = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        AtomicLong acked = new AtomicLong();
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, ClusterWaits.bootstrap(nodes));
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        config.put(ProducerConfig.RETRIES_CONFIG, Integer.MAX_VALUE);
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 300_000);
        config.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        byte[] value = new byte[1024];
        Arrays.fill(value, (byte) 'x');
        Properties adminConfig = new Properties();
        adminConfig.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, ClusterWaits.bootstrap(nodes));
        adminConfig.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        adminConfig.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config);
             Admin admin = Admin.create(adminConfig)) {
            Thread sender = new Thread(() -> {
                long next = System.nanoTime();
                while (!Thread.currentThread().isInterrupted()) {
                    long sentAt = System.nanoTime();
                    boolean afterKill = sentAt > killedAt.get();
                    try {
                        producer.send(new ProducerRecord<>(FAILOVER_TOPIC, 0, null, value), (metadata, error) -> {
                            if (error != null) {
                                failures.incrementAndGet();
                            } else {
                                acked.incrementAndGet();
                                if (afterKill) {
                                    firstAckAfterKill.compareAndSet(0, System.nanoTime());
                                }
                            }
                        });
                    } catch (RuntimeException e) {
                        failures.incrementAndGet();
                    }
                    next += FAILOVER_SEND_INTERVAL_NANOS;
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                        try {
                            TimeUnit.NANOSECONDS.sleep(wait);
                        } catch (InterruptedException e) {
                            return;
                        }
                    } else {
                        next = System.nanoTime();
                    }
                }
            }, "failover-sender");
            sender.setDaemon(true);
            sender.start();
            try {
                awaitAcks(acked, 2_000, Duration.ofSeconds(60), side);
                for (int kill = 1; kill <= options.kills(); kill++) {
                    ClusterWaits.awaitFullIsr(admin, List.of(PRODUCE_TOPIC, FIXED_TOPIC, FAILOVER_TOPIC), NODES,
                            Duration.ofSeconds(180), side);
                    int leader = ClusterWaits.leaderOf(admin, FAILOVER_TOPIC, 0);
                    int index = leader - 1;
                    long ackedBefore = acked.get();
                    awaitAcks(acked, ackedBefore + 500, Duration.ofSeconds(60), side);
                    firstAckAfterKill.set(0);
                    nodes[index].kill();
                    long killTime = System.nanoTime();
                    killedAt.set(killTime);
                    long deadline = killTime + TimeUnit.SECONDS.toNanos(120);
                    while (firstAckAfterKill.get() == 0 && System.nanoTime() < deadline) {
                        Thread.sleep(5);
                    }
                    long ackTime = firstAckAfterKill.get();
                    killedAt.set(Long.MAX_VALUE);
                    Double ms = ackTime == 0 ? null : (ackTime - killTime) / 1e6;
                    result.failoverMs.add(ms);
                    progress(String.format(Locale.ROOT, "%s kill %d of %d: node %d (leader of %s-0): %s",
                            side, kill, options.kills(), leader, FAILOVER_TOPIC,
                            ms == null ? "no acknowledgement within 120 s" : String.format(Locale.ROOT,
                                    "first acknowledged write after %.0f ms", ms)));
                    nodes[index].stop();
                    nodes[index] = nodes[index].relaunch();
                }
                ClusterWaits.awaitFullIsr(admin, List.of(PRODUCE_TOPIC, FIXED_TOPIC, FAILOVER_TOPIC), NODES,
                        Duration.ofSeconds(180), side);
            } finally {
                sender.interrupt();
                sender.join(10_000);
            }
            producer.flush();
        }
        if (failures.get() > 0) {
            result.notes.add(failures.get() + " failover sends failed");
        }
        progress(side + " failover: " + acked.get() + " records acknowledged, " + failures.get() + " failed");
    }

    private static void awaitAcks(AtomicLong acked, long target, Duration timeout, String side)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (acked.get() < target) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(side + ": the failover producer got no acknowledgements ("
                        + acked.get() + " of " + target + ") within " + timeout.toSeconds() + " s");
            }
            Thread.sleep(10);
        }
    }

    private PerfResult tool(String label, List<String> args, long expected) throws IOException, InterruptedException {
        return PerfTool.run(label, peerClasspath, args, expected, Duration.ofMinutes(15), workDir, cleanup);
    }

    private static void settle() throws IOException, InterruptedException {
        Process sync = new ProcessBuilder("sync").inheritIO().start();
        if (!sync.waitFor(120, TimeUnit.SECONDS)) {
            sync.destroyForcibly();
        }
        Thread.sleep(2_000);
    }

    private static String describe(PerfResult result) {
        if (!result.ok()) {
            return result.status().text() + ": " + result.reason();
        }
        StringBuilder out = new StringBuilder(Metric.RECORDS_PER_SEC.format(result.get(Metric.RECORDS_PER_SEC))
                + " records/s");
        if (result.get(Metric.P99_MS) != null) {
            out.append(", p50 ").append(Metric.P50_MS.format(result.get(Metric.P50_MS))).append(" ms, p99 ")
                    .append(Metric.P99_MS.format(result.get(Metric.P99_MS))).append(" ms, max ")
                    .append(Metric.MAX_MS.format(result.get(Metric.MAX_MS))).append(" ms");
        }
        return out.toString();
    }

    private void printSummary(Map<String, SideResult> results) {
        SideResult m = results.get(ResultTable.MILLRACE);
        SideResult k = results.get(ResultTable.KAFKA);
        System.out.println();
        System.out.println("| figure | Millrace | Kafka | ratio | target: met? |");
        System.out.println("|---|---:|---:|---:|---|");
        Double mp = figure(m == null ? null : m.produce, Metric.RECORDS_PER_SEC);
        Double kp = figure(k == null ? null : k.produce, Metric.RECORDS_PER_SEC);
        row("produce acks=all, records/s (p99 ms)", fmt(mp) + " (p99 " + fmt(figure(m == null ? null : m.produce,
                Metric.P99_MS)) + ")", fmt(kp) + " (p99 " + fmt(figure(k == null ? null : k.produce, Metric.P99_MS))
                + ")", ratio(mp, kp), target(mp, kp, 1.5, ">= 1.5x Kafka"));
        Double mc = figure(m == null ? null : m.consume, Metric.RECORDS_PER_SEC);
        Double kc = figure(k == null ? null : k.consume, Metric.RECORDS_PER_SEC);
        row("consume from start, records/s", fmt(mc), fmt(kc), ratio(mc, kc), target(mc, kc, 1.0, ">= 1x Kafka"));
        Double m99 = figure(m == null ? null : m.fixed, Metric.P99_MS);
        row("acks=all at " + options.fixedRate() + " records/s, p50 / p99 / max ms", latencies(m == null ? null
                : m.fixed), latencies(k == null ? null : k.fixed), "-", m99 == null ? "<= 20 ms: no figure"
                : "<= 20 ms: " + (m99 <= 20 ? "met" : "NOT MET"));
        List<Double> mf = m == null ? List.of() : m.failoverMs;
        List<Double> kf = k == null ? List.of() : k.failoverMs;
        Double mfp50 = percentile(mf, 50);
        row("failover, kill to first acknowledged write, p50 / max ms (kills)", failovers(mf), failovers(kf), "-",
                mfp50 == null ? "p50 <= 2 s: no figure" : "p50 <= 2 s: " + (mfp50 <= 2000 ? "met" : "NOT MET"));
        for (Map.Entry<String, SideResult> side : results.entrySet()) {
            for (String note : side.getValue().notes) {
                System.out.println("  " + side.getKey() + ": " + note);
            }
            for (PerfResult r : Arrays.asList(side.getValue().produce, side.getValue().consume, side.getValue().fixed)) {
                if (r != null && !r.ok()) {
                    System.out.println("  " + side.getKey() + ": " + r.status().text() + ": " + r.reason());
                }
            }
            System.out.println("  " + side.getKey() + " failover times (ms): " + side.getValue().failoverMs);
        }
    }

    private static void row(String... cells) {
        System.out.println("| " + String.join(" | ", cells) + " |");
    }

    private static Double figure(PerfResult result, Metric metric) {
        return result == null || !result.ok() ? null : result.get(metric);
    }

    private static String fmt(Double value) {
        return value == null ? "n/a" : String.format(Locale.ROOT, "%,.0f", value);
    }

    private static String ratio(Double millrace, Double kafka) {
        return millrace == null || kafka == null ? "n/a" : String.format(Locale.ROOT, "%.2f", millrace / kafka);
    }

    private static String target(Double millrace, Double kafka, double factor, String text) {
        if (millrace == null || kafka == null) {
            return text + ": no figure";
        }
        return text + ": " + (millrace / kafka >= factor ? "met" : "NOT MET");
    }

    private static String latencies(PerfResult result) {
        if (result == null || !result.ok()) {
            return "n/a";
        }
        return fmt(result.get(Metric.P50_MS)) + " / " + fmt(result.get(Metric.P99_MS)) + " / "
                + fmt(result.get(Metric.MAX_MS));
    }

    private static String failovers(List<Double> times) {
        if (times.isEmpty()) {
            return "n/a";
        }
        long missing = times.stream().filter(t -> t == null).count();
        Double p50 = percentile(times, 50);
        Double max = times.stream().filter(t -> t != null).max(Double::compare).orElse(null);
        return fmt(p50) + " / " + fmt(max) + " (" + times.size() + (missing > 0 ? ", " + missing
                + " without recovery in 120 s" : "") + ")";
    }

    /** Nearest-rank percentile; a kill without recovery counts as infinitely slow. */
    static Double percentile(List<Double> times, int percent) {
        if (times.isEmpty()) {
            return null;
        }
        List<Double> sorted = new ArrayList<>();
        for (Double t : times) {
            sorted.add(t == null ? Double.POSITIVE_INFINITY : t);
        }
        sorted.sort(Double::compare);
        int rank = (int) Math.ceil(percent / 100.0 * sorted.size());
        double value = sorted.get(Math.max(0, rank - 1));
        return Double.isInfinite(value) ? null : value;
    }

    private void progress(String message) {
        System.out.println("[" + elapsed(start) + "] " + message);
    }

    private static String elapsed(long since) {
        long seconds = Duration.ofNanos(System.nanoTime() - since).toSeconds();
        return String.format(Locale.ROOT, "%02d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60);
    }

    private static void usage() {
        System.out.println("Usage: java -cp bench/target/millrace-bench.jar dev.millrace.bench.e2e.ClusterComparison "
                + "[options]");
        System.out.println("Three Millrace nodes against three Kafka 4.4 KRaft nodes, one cluster at a time.");
        System.out.println("  --records N          records of the unthrottled produce and of the consume (1,000,000)");
        System.out.println("  --warmup-records N   unmeasured produce before, 0 for none (300,000)");
        System.out.println("  --fixed-rate R       records/s of the latency run (10,000)");
        System.out.println("  --fixed-records N    records of the latency run, first tenth unmeasured (200,000)");
        System.out.println("  --partitions N       partitions per topic (3); replication factor 3, min.insync.replicas=2");
        System.out.println("  --kills N            SIGKILLs of partition 0's leader per cluster (10)");
        System.out.println("  --failover-only      skip the perf-tool parts, only the kills");
        System.out.println("  --millrace-set N=V   a setting for every Millrace node, e.g. broker.session.timeout.ms=2000");
        System.out.println("  --kafka-first        run Kafka's cluster first");
        System.out.println("  --only millrace|kafka one side only");
        System.out.println("  --home DIR           project root (default: the current directory)");
        System.out.println("  --keep               keep the work directory (logs, data)");
    }
}
