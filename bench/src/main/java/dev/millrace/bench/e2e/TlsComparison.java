package dev.millrace.bench.e2e;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.Uuid;

/**
 * What {@code SASL_SSL} costs each broker, and Millrace against Apache Kafka 4.4 over it (issue 26): Kafka's
 * {@code ProducerPerformance} and {@code ConsumerPerformance} against each broker over its {@code SASL_SSL} listener
 * (SCRAM-SHA-512, TLS 1.3, {@link SaslSslSetup}) and over its {@code PLAINTEXT} listener, in one run.
 *
 * <p>How: each broker runs in a JVM of its own ({@link BrokerComparison#BROKER_JVM}) with both listeners, the same
 * self-signed key, the same SCRAM user, created through the Admin API. For each scenario ({@link Scenario}: acks=1,
 * acks=all, consume by default) the tool runs four times, one at a time, in the order
 * <pre>
 *   first broker SASL_SSL, second broker SASL_SSL, second broker PLAINTEXT, first broker PLAINTEXT
 * </pre>
 * where the first broker alternates per scenario ({@code --kafka-first} starts with Kafka), so that neither broker
 * nor transport always gets the warmer machine. Each transport writes its own topic ({@code e2e-acks1} and
 * {@code e2e-acks1-tls}, ...) and the consume runs read back the topic of their own transport. Before the measured
 * runs each broker gets an unmeasured warm-up over each listener. Settings other than the listeners are each
 * broker's defaults, as in {@link BrokerComparison}; producers run with {@code enable.idempotence=false}.
 *
 * <p>Reported per scenario and broker: the figures over SASL_SSL and over PLAINTEXT (with the CPU time the broker's
 * process used during the run), the cost (SASL_SSL / PLAINTEXT records/s) and Millrace/Kafka over each transport, against the target: over SASL_SSL Millrace
 * >= 1.5x Kafka for produce and >= 1x for consume.
 *
 * <pre>
 *   java -cp bench/target/millrace-bench.jar dev.millrace.bench.e2e.TlsComparison [--kafka-first] [options]
 * </pre>
 *
 * <p>Exits 0 when every run produced figures, 3 when some failed, 1 when the set-up failed, 2 on bad arguments.
 */
public final class TlsComparison {

    /** The two listeners each broker is measured through. */
    enum Transport {
        SASL_SSL("SASL_SSL"),
        PLAINTEXT("PLAINTEXT");

        private final String label;

        Transport(String label) {
            this.label = label;
        }

        String label() {
            return label;
        }
    }

    /** A broker with its SASL_SSL port besides the PLAINTEXT one of {@link BrokerNode#bootstrap()}. */
    record Target(BrokerNode node, int securePort) {
        String bootstrap(Transport transport) {
            return transport == Transport.SASL_SSL ? "127.0.0.1:" + securePort : node.bootstrap();
        }
    }

    /** What to run; see {@link #usage()}. */
    record Options(long records, long warmupRecords, int recordSize, Set<Scenario.Kind> runs, boolean kafkaFirst,
                   Path home, Path peerClasspathFile, boolean keep) {

        static Options parse(String[] args) {
            long records = 1_000_000;
            long warmup = 500_000;
            int recordSize = 1024;
            Set<Scenario.Kind> runs = EnumSet.of(Scenario.Kind.ACKS_1, Scenario.Kind.ACKS_ALL, Scenario.Kind.CONSUME);
            boolean kafkaFirst = false;
            boolean keep = false;
            Path home = Path.of("").toAbsolutePath();
            Path peerClasspath = null;
            for (int i = 0; i < args.length; i++) {
                String name = args[i];
                switch (name) {
                    case "-h", "--help" -> {
                        return null;
                    }
                    case "--kafka-first" -> kafkaFirst = true;
                    case "--keep" -> keep = true;
                    case "--quick" -> {
                        records = 100_000;
                        warmup = 20_000;
                    }
                    default -> {
                        if (i + 1 >= args.length) {
                            throw new IllegalArgumentException("missing value of " + name);
                        }
                        String value = args[++i];
                        switch (name) {
                            case "--records" -> records = positive(name, value);
                            case "--warmup-records" -> warmup = Long.parseLong(value);
                            case "--record-size" -> recordSize = Math.toIntExact(positive(name, value));
                            case "--runs" -> {
                                runs = EnumSet.noneOf(Scenario.Kind.class);
                                for (String key : value.split(",")) {
                                    Scenario.Kind kind = Scenario.Kind.of(key.trim());
                                    if (kind == Scenario.Kind.FIXED_RATE || kind == Scenario.Kind.SHARE
                                            || kind == Scenario.Kind.SHARE_4) {
                                        throw new IllegalArgumentException("--runs: " + key + " is not offered here "
                                                + "(known: acks1, acksall, idempotent, transactional, consume)");
                                    }
                                    runs.add(kind);
                                }
                            }
                            case "--home" -> home = Path.of(value).toAbsolutePath();
                            case "--peer-classpath" -> peerClasspath = Path.of(value).toAbsolutePath();
                            default -> throw new IllegalArgumentException("unexpected argument: " + name);
                        }
                    }
                }
            }
            return new Options(records, warmup, recordSize, runs, kafkaFirst, home,
                    peerClasspath != null ? peerClasspath : home.resolve("bench/target/kafka-peer.classpath"), keep);
        }

        private static long positive(String name, String value) {
            long parsed = Long.parseLong(value.replace("_", "").replace(",", ""));
            if (parsed <= 0) {
                throw new IllegalArgumentException(name + " must be positive: " + value);
            }
            return parsed;
        }
    }

    private final Options options;
    private final Path workDir;
    private final Cleanup cleanup;
    private final long start = System.nanoTime();

    private TlsComparison(Options options, Path workDir, Cleanup cleanup) {
        this.options = options;
        this.workDir = workDir;
        this.cleanup = cleanup;
    }

    public static void main(String[] args) {
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
        Cleanup.runAndExit("millrace-tls-", options.keep(),
                (workDir, cleanup) -> new TlsComparison(options, workDir, cleanup).run());
    }

    private int run() throws IOException, InterruptedException {
        String peerClasspath = BrokerComparison.readPeerClasspath(options.peerClasspathFile());
        SaslSslSetup tls = SaslSslSetup.create(workDir);
        List<Scenario> scenarios = new ArrayList<>();
        for (Scenario.Kind kind : options.runs()) {
            scenarios.add(Scenario.of(kind, options.records(), 0, 1, options.recordSize()));
        }
        printHeader();
        Map<String, Target> targets = new LinkedHashMap<>();
        try {
            for (String name : firstOrder()) {
                progress("starting " + name + " with a PLAINTEXT and a SASL_SSL listener");
                Target target = start(name, peerClasspath, tls);
                targets.put(name, target);
                tls.createUser(target.node(), target.bootstrap(Transport.SASL_SSL));
                progress(name + ": PLAINTEXT " + target.bootstrap(Transport.PLAINTEXT) + ", SASL_SSL "
                        + target.bootstrap(Transport.SASL_SSL) + " (pid " + target.node().pid() + "); SCRAM user "
                        + SaslSslSetup.USER + " logs in");
            }
            Set<String> topics = new LinkedHashSet<>();
            topics.add(BrokerComparison.WARMUP_TOPIC);
            for (Scenario scenario : scenarios) {
                for (Transport transport : Transport.values()) {
                    topics.add(on(scenario, transport).topic());
                }
            }
            for (Target target : targets.values()) {
                for (String topic : topics) {
                    target.node().createTopic(topic, 1);
                }
            }
            if (options.warmupRecords() > 0) {
                for (Target target : targets.values()) {
                    for (Transport transport : Transport.values()) {
                        produceUnmeasured(target, transport, BrokerComparison.WARMUP_TOPIC, options.warmupRecords(),
                                "warmup", peerClasspath, tls);
                    }
                }
            }
            Map<Scenario, Map<String, Map<Transport, PerfResult>>> results = new LinkedHashMap<>();
            Map<Scenario, List<String>> orders = new LinkedHashMap<>();
            boolean acks1Ran = false;
            for (int i = 0; i < scenarios.size(); i++) {
                Scenario scenario = scenarios.get(i);
                if (scenario.consumer() && !acks1Ran) {
                    for (Target target : targets.values()) {
                        for (Transport transport : Transport.values()) {
                            produceUnmeasured(target, Transport.PLAINTEXT, on(scenario, transport).topic(),
                                    scenario.records(), "fill", peerClasspath, tls);
                        }
                    }
                }
                acks1Ran |= scenario.kind() == Scenario.Kind.ACKS_1;
                List<String> brokers = i % 2 == 0 ? firstOrder() : List.of(firstOrder().get(1), firstOrder().get(0));
                List<String> order = List.of(brokers.get(0) + " " + Transport.SASL_SSL.label(),
                        brokers.get(1) + " " + Transport.SASL_SSL.label(),
                        brokers.get(1) + " " + Transport.PLAINTEXT.label(),
                        brokers.get(0) + " " + Transport.PLAINTEXT.label());
                orders.put(scenario, order);
                Map<String, Map<Transport, PerfResult>> byBroker = new LinkedHashMap<>();
                byBroker.put(ResultTable.MILLRACE, new EnumMap<>(Transport.class));
                byBroker.put(ResultTable.KAFKA, new EnumMap<>(Transport.class));
                results.put(scenario, byBroker);
                System.out.println();
                progress("run " + (i + 1) + " of " + scenarios.size() + ": " + scenario.title());
                for (String step : order) {
                    String broker = step.substring(0, step.indexOf(' '));
                    Transport transport = Transport.valueOf(step.substring(step.indexOf(' ') + 1));
                    PerfResult result = measure(targets.get(broker), on(scenario, transport), transport,
                            peerClasspath, tls);
                    byBroker.get(broker).put(transport, result);
                    progress("  " + step + ": " + BrokerComparison.summary(scenario, result));
                }
            }
            TlsResultTable table = new TlsResultTable(results, orders);
            System.out.println();
            System.out.println("Results (cost = SASL_SSL/PLAINTEXT records/s of the same broker; M/K = Millrace/Kafka; "
                    + "MB = 2^20 bytes)");
            System.out.println();
            System.out.print(table.plain());
            System.out.println("Markdown, for bench/RESULTS.md:");
            System.out.println();
            System.out.print(table.markdown(commandOf(scenarios.get(0))));
            return table.allOk() ? 0 : 3;
        } finally {
            List<Target> started = new ArrayList<>(targets.values());
            for (int i = started.size() - 1; i >= 0; i--) {
                BrokerNode node = started.get(i).node();
                progress("stopped " + node.name() + " (exit code " + node.stop() + ")");
            }
        }
    }

    private Target start(String name, String peerClasspath, SaslSslSetup tls)
            throws IOException, InterruptedException {
        int port = Cleanup.freePort();
        int securePort = Cleanup.freePort();
        int controllerPort = Cleanup.freePort();
        BrokerNode node;
        if (name.equals(ResultTable.MILLRACE)) {
            List<String> settings = new ArrayList<>(List.of("controller.host=127.0.0.1",
                    "controller.port=" + controllerPort));
            settings.addAll(tls.millraceSettings(port, securePort));
            node = BrokerNode.startMillrace(options.home(), workDir, name, port, BrokerComparison.BROKER_JVM,
                    cleanup, settings);
        } else {
            List<String> properties = new ArrayList<>(List.of(
                    "num.partitions=1",
                    "offsets.topic.replication.factor=1",
                    "transaction.state.log.replication.factor=1",
                    "transaction.state.log.min.isr=1",
                    "share.coordinator.state.topic.replication.factor=1",
                    "share.coordinator.state.topic.min.isr=1"));
            properties.addAll(tls.kafkaProperties(port, securePort, controllerPort));
            node = BrokerNode.startKafka(peerClasspath, workDir, name, BrokerComparison.BROKER_JVM, cleanup, 1, port,
                    controllerPort, "1@127.0.0.1:" + controllerPort, Uuid.randomUuid()
                            .toString(), properties);
        }
        node.awaitPort(securePort);
        return new Target(node, securePort);
    }

    /** The scenario as run over {@code transport}: over SASL_SSL on a topic of its own ({@code <topic>-tls}). */
    private static Scenario on(Scenario scenario, Transport transport) {
        if (transport == Transport.PLAINTEXT) {
            return scenario;
        }
        return new Scenario(scenario.kind(), scenario.title(), scenario.topic() + "-tls", scenario.records(),
                scenario.warmup(), scenario.throughput(), scenario.acks());
    }

    private List<String> toolArgs(Target target, Scenario scenario, Transport transport, SaslSslSetup tls) {
        String group = "e2e-tls-" + scenario.kind().key() + "-" + target.node().name().toLowerCase(Locale.ROOT) + "-"
                + transport.label().toLowerCase(Locale.ROOT);
        List<String> args = new ArrayList<>(scenario.toolArgs(target.bootstrap(transport), options.recordSize(),
                group));
        if (transport == Transport.SASL_SSL) {
            args.addAll(List.of("--command-config", tls.clientProperties().toString()));
        }
        return args;
    }

    private String commandOf(Scenario scenario) {
        Scenario tls = on(scenario, Transport.SASL_SSL);
        List<String> args = new ArrayList<>(tls.toolArgs("<broker SASL_SSL>", options.recordSize(), "<group>"));
        args.addAll(List.of("--command-config", "<work dir>/tls/client.properties"));
        return PerfTool.printable(args, "<broker SASL_SSL>");
    }

    private PerfResult measure(Target target, Scenario scenario, Transport transport, String peerClasspath,
                               SaslSslSetup tls) throws IOException, InterruptedException {
        BrokerNode node = target.node();
        if (!node.alive()) {
            return PerfResult.failed(PerfResult.Status.FAILED, node.name() + " had exited before this run");
        }
        BrokerComparison.settle();
        String label = node.name().toLowerCase(Locale.ROOT) + "-" + transport.label().toLowerCase(Locale.ROOT) + "-"
                + scenario.kind().key();
        Duration cpuBefore = node.cpuTime();
        PerfResult result = PerfTool.run(label, peerClasspath, toolArgs(target, scenario, transport, tls),
                scenario.records(), scenario.timeout(), workDir, cleanup);
        Duration cpuAfter = node.cpuTime();
        if (result.ok() && cpuBefore != null && cpuAfter != null) {
            Map<Metric, Double> figures = new EnumMap<>(result.figures());
            figures.put(Metric.BROKER_CPU_S, cpuAfter.minus(cpuBefore).toMillis() / 1000.0);
            result = new PerfResult(result.status(), result.reason(), figures);
        }
        if (!node.alive()) {
            node.printLogTail(30);
            return new PerfResult(PerfResult.Status.FAILED, node.name() + " exited during the run (code "
                    + node.stop() + ")" + (result.ok() ? "" : "; " + result.reason()), result.figures());
        }
        return result;
    }

    private void produceUnmeasured(Target target, Transport transport, String topic, long records, String what,
                                   String peerClasspath, SaslSslSetup tls) throws IOException, InterruptedException {
        Scenario fill = new Scenario(Scenario.Kind.ACKS_1, what, topic, records, 0, -1, "1");
        String label = target.node().name().toLowerCase(Locale.ROOT) + "-" + what + "-" + topic + "-"
                + transport.label().toLowerCase(Locale.ROOT);
        progress(target.node().name() + " " + transport.label() + ": " + what + " of " + topic + ", "
                + String.format(Locale.ROOT, "%,d", records) + " records (acks=1, not measured)");
        PerfResult result = PerfTool.run(label, peerClasspath, toolArgs(target, fill, transport, tls), records,
                fill.timeout(), workDir, cleanup);
        progress("  " + BrokerComparison.summary(fill, result));
        if (!result.ok()) {
            throw new IllegalStateException(target.node().name() + " " + transport.label() + " " + what + " failed: "
                    + result.reason());
        }
    }

    private List<String> firstOrder() {
        return options.kafkaFirst() ? List.of(ResultTable.KAFKA, ResultTable.MILLRACE)
                : List.of(ResultTable.MILLRACE, ResultTable.KAFKA);
    }

    private void printHeader() {
        System.out.println("Millrace vs Apache Kafka 4.4 over SASL_SSL (" + SaslSslSetup.MECHANISM + ", "
                + SaslSslSetup.TLS_VERSION + ") and PLAINTEXT, with Kafka's perf tools (" + Instant.now() + ")");
        System.out.println("  Millrace build: " + BrokerComparison.gitDescribe(options.home()) + "; Java "
                + System.getProperty("java.version") + "; " + Runtime.getRuntime().availableProcessors() + " cores");
        System.out.println("  broker JVMs (both): " + String.join(" ", BrokerComparison.BROKER_JVM)
                + "; tool JVMs: " + String.join(" ", PerfTool.TOOL_JVM.subList(0, 3)));
        System.out.println("  topics: 1 partition, replication factor 1; " + String.format(Locale.ROOT, "%,d",
                options.records()) + " records of " + options.recordSize() + " B per run; warm-up "
                + String.format(Locale.ROOT, "%,d", options.warmupRecords()) + " records per broker and listener");
        System.out.println("  order per run: first SASL_SSL, second SASL_SSL, second PLAINTEXT, first PLAINTEXT; "
                + "first = " + firstOrder().get(0) + ", then alternating");
        System.out.println("  work directory: " + workDir + (options.keep() ? " (kept)" : " (deleted at the end)"));
        System.out.println();
    }

    private void progress(String message) {
        System.out.println("[" + BrokerComparison.elapsed(start) + "] " + message);
    }

    private static void usage() {
        System.out.println("Usage: java -cp bench/target/millrace-bench.jar dev.millrace.bench.e2e.TlsComparison "
                + "[options]");
        System.out.println("Runs Kafka's ProducerPerformance and ConsumerPerformance against Millrace and Kafka 4.4,");
        System.out.println("each over SASL_SSL (SCRAM-SHA-512, TLS 1.3) and over PLAINTEXT, and prints the costs.");
        System.out.println("  --records N           records per run (default 1,000,000)");
        System.out.println("  --warmup-records N    unmeasured warm-up per broker and listener (default 500,000)");
        System.out.println("  --record-size B       bytes per record value (default 1024)");
        System.out.println("  --runs LIST           of acks1,acksall,idempotent,transactional,consume "
                + "(default acks1,acksall,consume)");
        System.out.println("  --kafka-first         start the alternation with Kafka (default Millrace)");
        System.out.println("  --quick               100,000 records, 20,000 warm-up");
        System.out.println("  --home DIR            project root (default: the current directory)");
        System.out.println("  --peer-classpath FILE Kafka's classpath (default bench/target/kafka-peer.classpath)");
        System.out.println("  --keep                keep the work directory (logs, data, keys)");
    }
}
