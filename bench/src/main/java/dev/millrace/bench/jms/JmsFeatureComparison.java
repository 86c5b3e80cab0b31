package dev.millrace.bench.jms;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import dev.millrace.bench.e2e.Cleanup;
import jakarta.jms.ConnectionFactory;

/**
 * The JMS comparison of issue 7: transacted sends, queue selectors and delivery delay, with the same
 * {@link JmsFeatureHarness} against Millrace and Apache ActiveMQ Artemis 2.40 in one run; brokers and connection
 * factories as in {@link JmsComparison} ({@link JmsBrokers}). The harness runs in this JVM against one broker at a
 * time (Millrace first unless {@code --artemis-first}); both stay up, the other idle.
 *
 * <pre>
 *   mvn -B -q install -DskipTests
 *   java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -cp bench/target/millrace-bench.jar dev.millrace.bench.jms.JmsFeatureComparison
 *       [--quick] [--scenarios txn,selector,delay] [--selector-messages N] [--selector-rounds N]
 *       [--artemis-first] [--only millrace|artemis] [--millrace-set NAME=VALUE]... [--keep] [--home DIR]
 * </pre>
 *
 * <p>Prints each figure as it comes, then Markdown tables with Millrace/Artemis ratios and the targets of issue 7:
 * transacted throughput Millrace &ge; Artemis at every batch size; selective consumption &ge; 50% of unfiltered
 * (matches delivered/s over the unfiltered consumer's messages/s, on the same broker, the median of
 * {@code --selector-rounds} rounds, 3 by default and 1 with {@code --quick}, after 3 unmeasured passes, 1 with
 * {@code --quick}); no message delivered before its
 * JMSDeliveryTime. Exits 0 when every scenario produced figures, 1 otherwise, 2 on bad arguments.
 */
public final class JmsFeatureComparison {

    private static final String USAGE = "usage: JmsFeatureComparison [--quick] [--scenarios txn,selector,delay] "
            + "[--selector-messages N] [--selector-rounds N] [--artemis-first] [--only millrace|artemis] "
            + "[--millrace-set NAME=VALUE]... [--keep] [--home DIR]";

    /** Per broker: what each scenario produced, or why it did not. */
    static final class Outcome {
        final Map<Integer, JmsFeatureHarness.Transacted> transacted = new LinkedHashMap<>();
        JmsFeatureHarness.Selectors selectors;
        JmsFeatureHarness.Delays delays;
        final Map<String, String> failures = new LinkedHashMap<>();
    }

    /** One scenario of one broker. */
    private interface Step {
        void run() throws Exception;
    }

    private JmsFeatureComparison() {
    }

    public static void main(String[] args) throws Exception {
        boolean quick = false;
        boolean artemisFirst = false;
        boolean keep = false;
        String only = null;
        Set<String> scenarios = new LinkedHashSet<>(List.of("txn", "selector", "delay"));
        List<String> millraceSettings = new ArrayList<>(List.of("group.share.auto.offset.reset=earliest"));
        Path home = Path.of("").toAbsolutePath();
        int selectorMessages = -1;
        int selectorRounds = -1;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--artemis-first" -> artemisFirst = true;
                case "--keep" -> keep = true;
                case "--only" -> only = args[++i];
                case "--home" -> home = Path.of(args[++i]).toAbsolutePath();
                case "--millrace-set" -> millraceSettings.add(args[++i]);
                case "--scenarios" -> scenarios = new LinkedHashSet<>(List.of(args[++i].split(",")));
                case "--selector-messages" -> selectorMessages = Integer.parseInt(args[++i]);
                case "--selector-rounds" -> selectorRounds = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("unknown argument " + args[i] + "; " + USAGE);
                    System.exit(2);
                }
            }
        }
        if (!Set.of("txn", "selector", "delay").containsAll(scenarios)) {
            System.err.println("unknown scenario in " + scenarios + "; " + USAGE);
            System.exit(2);
        }
        JmsFeatureHarness.Settings settings = quick
                ? new JmsFeatureHarness.Settings("bench7", 1024, 10_000, List.of(1, 10, 100), 3,
                        selectorMessages > 0 ? selectorMessages : 10_000, 10, 10_000, 5_000, 1_000, 5_000, 10_000,
                        120_000, selectorRounds > 0 ? selectorRounds : 1, 1)
                : new JmsFeatureHarness.Settings("bench7", 1024, 50_000, List.of(1, 10, 100), 8,
                        selectorMessages > 0 ? selectorMessages : 50_000, 10, 10_000, 20_000, 1_000, 5_000, 10_000,
                        120_000, selectorRounds > 0 ? selectorRounds : 3, 3);
        Path workDir = Files.createTempDirectory("millrace-jms7-");
        Cleanup cleanup = new Cleanup(workDir, keep);
        Runtime.getRuntime().addShutdownHook(new Thread(cleanup, "jms-cleanup"));
        System.out.println("JMS comparison (issue 7) " + LocalDateTime.now() + ", work directory " + workDir
                + ", scenarios " + scenarios + ", " + settings);
        Map<String, Outcome> outcomes = new LinkedHashMap<>();
        try {
            JmsBrokers brokers = JmsBrokers.start(new JmsBrokers.Options(artemisFirst, keep, only, millraceSettings,
                    home), workDir, cleanup);
            for (Map.Entry<String, ConnectionFactory> entry : brokers.factories().entrySet()) {
                String name = entry.getKey();
                System.out.println(name + ":");
                Consumer<String> log = line -> System.out.println("  " + line);
                JmsFeatureHarness harness = new JmsFeatureHarness(entry.getValue(), settings);
                Outcome outcome = new Outcome();
                outcomes.put(name, outcome);
                if (!attempt(name, "warmup", outcome, brokers, () -> harness.warmup(log))) {
                    continue;
                }
                if (scenarios.contains("txn")) {
                    for (int batch : settings.batchSizes()) {
                        attempt(name, "txn-" + batch, outcome, brokers,
                                () -> outcome.transacted.put(batch, harness.transacted(batch, log)));
                    }
                }
                if (scenarios.contains("selector")) {
                    attempt(name, "selector", outcome, brokers, () -> outcome.selectors = harness.selectors(log));
                }
                if (scenarios.contains("delay")) {
                    attempt(name, "delay", outcome, brokers, () -> outcome.delays = harness.delays(log));
                }
            }
            brokers.stop();
        } finally {
            cleanup.run();
        }
        System.out.println();
        System.out.print(JmsFeatureTables.markdown(outcomes, settings, scenarios));
        boolean failed = outcomes.values().stream().anyMatch(o -> !o.failures.isEmpty());
        System.exit(failed ? 1 : 0);
    }

    /** Runs one scenario; a failure is printed with the brokers' log tails and kept for the tables. */
    private static boolean attempt(String broker, String scenario, Outcome outcome, JmsBrokers brokers, Step step) {
        try {
            step.run();
            return true;
        } catch (Exception e) {
            outcome.failures.put(scenario, e.toString());
            System.out.println("  " + broker + " " + scenario + " failed: " + e);
            e.printStackTrace(System.out);
            brokers.printLogTails(20);
            return false;
        }
    }

    static String format(double value) {
        return String.format(Locale.ROOT, "%,.0f", value);
    }
}
