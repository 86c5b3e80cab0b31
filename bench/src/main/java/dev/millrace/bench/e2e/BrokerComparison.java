package dev.millrace.bench.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * End-to-end comparison of the Millrace broker with a real Apache Kafka 4.4 broker, measured by
 * Kafka's own perf tools ({@code ProducerPerformance} and {@code ConsumerPerformance} from
 * kafka-tools), in one run on this machine.
 *
 * <p>How: both brokers run as separate JVMs with the same options ({@link #BROKER_JVM}) on
 * 127.0.0.1, with data in a fresh temporary directory: Millrace from {@code broker/target}, Kafka
 * as a KRaft single node (combined broker and controller) from the classpath that the bench build
 * writes to {@code bench/target/kafka-peer.classpath}. Each gets the same topics (replication
 * factor 1, {@code --partitions} partitions, 1 by default), created with the Admin client. Then,
 * for each broker in turn, never both at once, a tool JVM runs each scenario ({@link Scenario}):
 * produce with acks=1 and with acks=all unthrottled, produce at a fixed rate (acks=all) for
 * latency, its first tenth left out of the latency figures as the tool's warmup, and consume the
 * acks=1 topic with a consumer group, with one share consumer ("share") and with four share
 * consumers in one share group ("share4": more consumers than the topic has partitions, as a
 * queue's competing consumers; a consumer group would leave all but one idle). Producers use {@code
 * enable.idempotence=false} on both brokers, except the "idempotent" run (acks=all with {@code
 * enable.idempotence=true}) and the "transactional" run (the tool's {@code --transactional-id},
 * committing every 100 ms), so the other runs compare the same non-idempotent path as before
 * idempotence existed. Before the measured runs each broker gets an unmeasured warmup run of
 * 1,000,000 records (with 100,000 the first seconds of each measured run were still warming up and
 * set its p99); before each measured run the page cache is flushed ({@code sync}) so that one run's
 * writeback does not land in the next. The order alternates per scenario (the first scenario loads
 * Millrace first, the second Kafka first, and so on; {@code --kafka-first} swaps) so that neither
 * broker always gets the warmer or the cooler machine; both brokers stay up, idle while the other
 * is loaded.
 *
 * <p>The figures are the tools' own: records/s and MB/s (2^20 bytes of record values), and for
 * producers the send-to-acknowledgement latency (average, max and whole-millisecond percentiles).
 * A table per run shows Millrace, Kafka and Millrace/Kafka, as text and as Markdown. Both brokers
 * are stopped (SIGTERM, SIGKILL after 30 s) and the temporary directory is deleted at the end, on
 * failure and on Ctrl-C too.
 *
 * <pre>
 *   mvn -B -q package -DskipTests
 *   java -cp bench/target/millrace-bench.jar dev.millrace.bench.e2e.BrokerComparison [--quick] [options]
 * </pre>
 *
 * <p>Run from the project root (or give {@code --home}). Exits 0 when every run produced figures,
 * 3 when some run failed (its row says why), 1 when the comparison could not be set up, 2 on bad
 * arguments.
 */
public final class BrokerComparison {

    /** JVM options of both brokers: the same heap for each, pre-touched (first touch is slow here). */
    public static final List<String> BROKER_JVM = List.of("-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch");

    static final String WARMUP_TOPIC = "e2e-warmup";

    private final Options options;
    private final Path workDir;
    private final Cleanup cleanup;
    private final long start = System.nanoTime();

    private BrokerComparison(Options options, Path workDir, Cleanup cleanup) {
        this.options = options;
        this.workDir = workDir;
        this.cleanup = cleanup;
    }

    /** What to run; see {@link #usage()}. */
    record Options(boolean quick, long records, long fixedRecords, long fixedRate, long warmupRecords,
                   int recordSize, int partitions, Set<Scenario.Kind> runs, List<String> brokers,
                   boolean kafkaFirst, Path home, Path peerClasspathFile, boolean keep) {

        /** Parses the arguments; null means help was asked for. */
        static Options parse(String[] args) {
            boolean quick = false;
            Long records = null;
            Long fixedRecords = null;
            long fixedRate = 10_000;
            Long warmup = null;
            int recordSize = 1024;
            int partitions = 1;
            Set<Scenario.Kind> runs = EnumSet.allOf(Scenario.Kind.class);
            List<String> brokers = List.of(ResultTable.MILLRACE, ResultTable.KAFKA);
            boolean kafkaFirst = false;
            Path home = Path.of("").toAbsolutePath();
            Path peerClasspath = null;
            boolean keep = false;
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
                String inline = arg.contains("=") ? arg.substring(arg.indexOf('=') + 1) : null;
                switch (name) {
                    case "-h", "--help" -> {
                        return null;
                    }
                    case "--quick" -> quick = true;
                    case "--kafka-first" -> kafkaFirst = true;
                    case "--keep" -> keep = true;
                    default -> {
                        String value = inline;
                        if (value == null) {
                            if (i + 1 >= args.length) {
                                throw new IllegalArgumentException("missing value of " + name);
                            }
                            value = args[++i];
                        }
                        switch (name) {
                            case "--records" -> records = positive(name, value);
                            case "--fixed-records" -> fixedRecords = positive(name, value);
                            case "--fixed-rate" -> fixedRate = positive(name, value);
                            case "--warmup-records" -> warmup = Long.parseLong(value);
                            case "--record-size" -> recordSize = Math.toIntExact(positive(name, value));
                            case "--partitions" -> partitions = Math.toIntExact(positive(name, value));
                            case "--runs" -> {
                                runs = EnumSet.noneOf(Scenario.Kind.class);
                                for (String key : value.split(",")) {
                                    runs.add(Scenario.Kind.of(key.trim()));
                                }
                            }
                            case "--brokers" -> {
                                List<String> chosen = new ArrayList<>();
                                for (String key : value.split(",")) {
                                    switch (key.trim().toLowerCase(Locale.ROOT)) {
                                        case "millrace" -> chosen.add(ResultTable.MILLRACE);
                                        case "kafka" -> chosen.add(ResultTable.KAFKA);
                                        default -> throw new IllegalArgumentException("unknown broker '" + key
                                                + "' (known: millrace, kafka)");
                                    }
                                }
                                brokers = List.copyOf(chosen);
                            }
                            case "--home" -> home = Path.of(value).toAbsolutePath();
                            case "--peer-classpath" -> peerClasspath = Path.of(value).toAbsolutePath();
                            default -> throw new IllegalArgumentException("unexpected argument: " + arg);
                        }
                    }
                }
            }
            return new Options(quick,
                    records != null ? records : quick ? 100_000 : 1_000_000,
                    fixedRecords != null ? fixedRecords : quick ? 30_000 : 300_000,
                    fixedRate,
                    warmup != null ? warmup : quick ? 20_000 : 1_000_000,
                    recordSize, partitions, runs, brokers, kafkaFirst, home,
                    peerClasspath != null ? peerClasspath : home.resolve("bench/target/kafka-peer.classpath"),
                    keep);
        }

        private static long positive(String name, String value) {
            long parsed = Long.parseLong(value.replace("_", "").replace(",", ""));
            if (parsed <= 0) {
                throw new IllegalArgumentException(name + " must be positive: " + value);
            }
            return parsed;
        }
    }

    public static void main(String[] args) {
        // The Admin client in this JVM logs through slf4j-simple; keep it to warnings.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
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
        Cleanup.runAndExit("millrace-e2e-", options.keep(),
                (workDir, cleanup) -> new BrokerComparison(options, workDir, cleanup).run());
    }

    private int run() throws IOException, InterruptedException {
        String peerClasspath = peerClasspath();
        List<Scenario> scenarios = new ArrayList<>();
        for (Scenario.Kind kind : options.runs()) {
            scenarios.add(Scenario.of(kind, options.records(), options.fixedRecords(), options.fixedRate(),
                    options.recordSize()));
        }
        printHeader();

        Map<String, BrokerNode> nodes = new LinkedHashMap<>();
        try {
            for (String name : firstOrder()) {
                if (!options.brokers().contains(name)) {
                    continue;
                }
                progress("starting " + name);
                BrokerNode node = name.equals(ResultTable.MILLRACE)
                        ? BrokerNode.startMillrace(options.home(), workDir, BROKER_JVM, cleanup)
                        : BrokerNode.startKafka(peerClasspath, workDir, BROKER_JVM, options.partitions(), cleanup);
                nodes.put(name, node);
                progress(name + " accepts connections on " + node.bootstrap() + " (pid " + node.pid() + ")");
            }
            Set<String> topics = new LinkedHashSet<>();
            if (options.warmupRecords() > 0) {
                topics.add(WARMUP_TOPIC);
            }
            for (Scenario scenario : scenarios) {
                topics.add(scenario.topic());
            }
            for (BrokerNode node : nodes.values()) {
                for (String topic : topics) {
                    node.createTopic(topic, options.partitions());
                }
                progress(node.name() + ": created topics " + topics);
            }

            if (options.warmupRecords() > 0) {
                for (BrokerNode node : nodes.values()) {
                    produceUnmeasured(node, WARMUP_TOPIC, options.warmupRecords(), "warmup", peerClasspath);
                }
            }

            ResultTable table = new ResultTable();
            boolean acks1Ran = false;
            for (int i = 0; i < scenarios.size(); i++) {
                Scenario scenario = scenarios.get(i);
                List<String> order = new ArrayList<>();
                for (String name : i % 2 == 0 ? firstOrder() : List.of(firstOrder().get(1), firstOrder().get(0))) {
                    if (nodes.containsKey(name)) {
                        order.add(name);
                    }
                }
                table.add(scenario, order, PerfTool.printable(
                        scenario.toolArgs("<broker>", options.recordSize(),
                        groupPrefix(scenario) + "<broker>"),
                        "<broker>"));
                if (scenario.consumer() && !acks1Ran) {
                    for (BrokerNode node : nodes.values()) {
                        produceUnmeasured(node, scenario.topic(), scenario.records(), "fill", peerClasspath);
                    }
                    acks1Ran = true;
                }
                System.out.println();
                progress("run " + (i + 1) + " of " + scenarios.size() + ": " + scenario.title());
                for (String name : order) {
                    PerfResult result = measure(nodes.get(name), scenario, peerClasspath);
                    if (scenario.share()) {
                        result = withShareOfGroup(table, name, result);
                    }
                    table.put(scenario, name, result);
                    progress("  " + name + ": " + summary(scenario, result));
                }
                acks1Ran |= scenario.kind() == Scenario.Kind.ACKS_1;
            }

            System.out.println();
            System.out.println("Results (ratio Millrace/Kafka: throughput above 1 is better, latency below 1 is "
                    + "better; MB = 2^20 bytes)");
            System.out.println();
            System.out.print(table.plain());
            System.out.println("Markdown, for bench/RESULTS.md:");
            System.out.println();
            System.out.print(table.markdown());
            return table.allOk() ? 0 : 3;
        } finally {
            List<BrokerNode> started = new ArrayList<>(nodes.values());
            for (int i = started.size() - 1; i >= 0; i--) {
                BrokerNode node = started.get(i);
                int code = node.stop();
                progress("stopped " + node.name() + " (exit code " + code + ")");
            }
        }
    }

    /** The order of the first scenario; later scenarios alternate. */
    private List<String> firstOrder() {
        return options.kafkaFirst() ? List.of(ResultTable.KAFKA, ResultTable.MILLRACE)
                : List.of(ResultTable.MILLRACE, ResultTable.KAFKA);
    }

    private PerfResult measure(BrokerNode node, Scenario scenario, String peerClasspath)
            throws IOException, InterruptedException {
        if (!node.alive()) {
            return PerfResult.failed(PerfResult.Status.FAILED, node.name() + " had exited before this run");
        }
        settle();
        int logLinesBefore = Cleanup.readLines(node.log()).size();
        String label = node.name().toLowerCase(Locale.ROOT) + "-" + scenario.kind().key();
        String group = groupOf(node, scenario);
        if (scenario.share()) {
            node.setShareGroupEarliest(group);
        }
        PerfResult result = PerfTool.run(label, peerClasspath,
                scenario.toolArgs(node.bootstrap(), options.recordSize(), group), scenario.records(),
                scenario.timeout(), workDir, cleanup);
        if (result.ok() && node.alive()) {
            return result;
        }
        String reason = result.ok() ? "" : result.reason();
        if (!node.alive()) {
            reason = node.name() + " exited during the run (code " + node.stop() + ")"
                    + (reason.isEmpty() ? "" : "; " + reason);
            node.printLogTail(30);
        }
        List<String> logLines = Cleanup.readLines(node.log());
        List<String> brokerProblems = Cleanup.problems(
                logLines.subList(Math.min(logLinesBefore, logLines.size()), logLines.size()), 6);
        if (!brokerProblems.isEmpty()) {
            reason += "; the broker logged: " + String.join(" | ", brokerProblems);
        }
        PerfResult.Status status = node.name().equals(ResultTable.MILLRACE)
                && scenario.kind() == Scenario.Kind.CONSUME
                ? PerfResult.Status.NOT_SUPPORTED : PerfResult.Status.FAILED;
        return new PerfResult(status, reason, result.figures());
    }

    private static String groupOf(BrokerNode node, Scenario scenario) {
        return groupPrefix(scenario) + node.name().toLowerCase(Locale.ROOT);
    }

    /** Each consuming run has a group of its own, so no run starts where another left off. */
    private static String groupPrefix(Scenario scenario) {
        return "e2e-" + (scenario.kind() == Scenario.Kind.CONSUME ? "consume" : scenario.kind().key()) + "-";
    }

    /**
     * Adds share/group to a share run's figures: its records/s over those of the consumer-group run
     * on the same broker in this comparison (same topic, same records), when that run succeeded.
     */
    private static PerfResult withShareOfGroup(ResultTable table, String broker, PerfResult share) {
        if (!share.ok()) {
            return share;
        }
        for (ResultTable.Entry entry : table.entries()) {
            PerfResult group = entry.results().get(broker);
            if (entry.scenario().kind() == Scenario.Kind.CONSUME && group != null && group.ok()) {
                Map<Metric, Double> figures = new LinkedHashMap<>(share.figures());
                figures.put(Metric.SHARE_OF_GROUP, share.get(Metric.RECORDS_PER_SEC)
                        / group.get(Metric.RECORDS_PER_SEC));
                return new PerfResult(share.status(), share.reason(), figures);
            }
        }
        return share;
    }

    private void produceUnmeasured(BrokerNode node, String topic, long records, String what, String peerClasspath)
            throws IOException, InterruptedException {
        progress(node.name() + ": " + what + ", " + String.format(Locale.ROOT, "%,d", records)
                + " records (acks=1, unthrottled, not measured)");
        Scenario fill = new Scenario(Scenario.Kind.ACKS_1, what, topic, records, 0, -1, "1");
        PerfResult result = PerfTool.run(node.name().toLowerCase(Locale.ROOT) + "-" + what, peerClasspath,
                fill.toolArgs(node.bootstrap(), options.recordSize(), ""), records, fill.timeout(), workDir, cleanup);
        progress("  " + node.name() + " " + what + ": " + summary(fill, result));
    }

    /** Flushes dirty pages so one run's writeback does not fall into the next, then lets the machine settle. */
    static void settle() throws IOException, InterruptedException {
        Process sync = new ProcessBuilder("sync").inheritIO().start();
        if (!sync.waitFor(120, TimeUnit.SECONDS)) {
            sync.destroyForcibly();
        }
        Thread.sleep(2_000);
    }

    static String summary(Scenario scenario, PerfResult result) {
        if (!result.ok()) {
            return result.status().text() + ": " + result.reason();
        }
        StringBuilder out = new StringBuilder();
        out.append(Metric.RECORDS_PER_SEC.format(result.get(Metric.RECORDS_PER_SEC))).append(" records/s, ")
                .append(Metric.MB_PER_SEC.format(result.get(Metric.MB_PER_SEC))).append(" MB/s");
        if (scenario.producer()) {
            out.append(", p50 ").append(Metric.P50_MS.format(result.get(Metric.P50_MS)))
                    .append(" ms, p99 ").append(Metric.P99_MS.format(result.get(Metric.P99_MS)))
                    .append(" ms, max ").append(Metric.MAX_MS.format(result.get(Metric.MAX_MS))).append(" ms");
        } else if (scenario.share()) {
            Double ratio = result.get(Metric.SHARE_OF_GROUP);
            out.append(", share/group ").append(ratio == null ? "n/a" : Metric.SHARE_OF_GROUP.format(ratio));
        } else {
            out.append(", fetching only ")
                    .append(Metric.FETCH_MB_PER_SEC.format(result.get(Metric.FETCH_MB_PER_SEC))).append(" MB/s, ")
                    .append("group join ").append(Metric.GROUP_JOIN_MS.format(result.get(Metric.GROUP_JOIN_MS)))
                    .append(" ms");
        }
        return out.toString();
    }

    private String peerClasspath() throws IOException {
        return readPeerClasspath(options.peerClasspathFile());
    }

    /** The Kafka classpath the bench build wrote to {@code file}, checked to be there and not empty. */
    static String readPeerClasspath(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IllegalStateException(file + " not found; build first with: mvn -B -q package -DskipTests");
        }
        String classpath = Files.readString(file, StandardCharsets.UTF_8).strip();
        if (classpath.isEmpty()) {
            throw new IllegalStateException(file + " is empty");
        }
        return classpath;
    }

    private void printHeader() {
        System.out.println("Millrace vs Apache Kafka 4.4, end to end with Kafka's perf tools ("
                + (options.quick() ? "quick" : "full") + " run, " + Instant.now() + ")");
        System.out.println("  Millrace build: " + gitDescribe() + "; Java " + System.getProperty("java.version")
                + "; " + Runtime.getRuntime().availableProcessors() + " cores");
        System.out.println("  broker JVMs (both): " + String.join(" ", BROKER_JVM) + "; tool JVMs: "
                + String.join(" ", PerfTool.TOOL_JVM.subList(0, 3)));
        System.out.println("  topics: " + options.partitions() + " partition(s), replication factor 1; records of "
                + options.recordSize() + " B; producers: enable.idempotence=false except in the idempotent and transactional runs");
        System.out.println("  order: alternating per run, starting with " + firstOrder().get(0) + "; warmup "
                + String.format(Locale.ROOT, "%,d", options.warmupRecords()) + " records per broker; "
                + "sync before each measured run");
        System.out.println("  work directory: " + workDir + (options.keep() ? " (kept)" : " (deleted at the end)"));
        System.out.println();
    }

    private String gitDescribe() {
        return gitDescribe(options.home());
    }

    /** {@code git describe --always --dirty} of {@code home}, or "unknown". */
    static String gitDescribe(Path home) {
        try {
            Process git = new ProcessBuilder("git", "-C", home.toString(), "describe", "--always",
                    "--dirty").redirectErrorStream(true).start();
            if (!git.waitFor(10, TimeUnit.SECONDS)) {
                git.destroyForcibly();
                return "unknown";
            }
            String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            return git.exitValue() == 0 ? out : "unknown";
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    private void progress(String message) {
        System.out.println("[" + elapsed(start) + "] " + message);
    }

    static String elapsed(long since) {
        long seconds = Duration.ofNanos(System.nanoTime() - since).toSeconds();
        return String.format(Locale.ROOT, "%02d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60);
    }

    public static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static void usage() {
        System.out.println("Usage: java -cp bench/target/millrace-bench.jar dev.millrace.bench.e2e.BrokerComparison "
                + "[options]");
        System.out.println("Runs Kafka's ProducerPerformance and ConsumerPerformance against Millrace and a real");
        System.out.println("Kafka 4.4 broker, one after the other, and prints the figures side by side.");
        System.out.println("  --quick               100,000 records, 30,000 at the fixed rate, 20,000 warmup");
        System.out.println("  --records N           records per unthrottled run and consume (default 1,000,000)");
        System.out.println("  --fixed-records N     records of the fixed-rate run (default 300,000)");
        System.out.println("  --fixed-rate R        records/s of the fixed-rate run (default 10,000)");
        System.out.println("  --warmup-records N    unmeasured warmup per broker, 0 for none (default 1,000,000)");
        System.out.println("  --record-size B       bytes per record value (default 1024)");
        System.out.println("  --partitions N        partitions per topic, the same on both (default 1)");
        System.out.println("  --runs LIST           of acks1,acksall,idempotent,transactional,fixed,consume,share,share4 (default "
                + "all; consume or share without acks1 fills the topic first; share/group needs consume before share; "
                + "share4: four share consumers)");
        System.out.println("  --brokers LIST        of millrace,kafka (default both)");
        System.out.println("  --kafka-first         start the alternation with Kafka (default Millrace)");
        System.out.println("  --home DIR            project root (default: the current directory)");
        System.out.println("  --peer-classpath FILE Kafka's classpath (default bench/target/kafka-peer.classpath)");
        System.out.println("  --keep                keep the work directory (logs, data) instead of deleting it");
    }
}
