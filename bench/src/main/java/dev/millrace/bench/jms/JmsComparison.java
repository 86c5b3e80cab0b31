package dev.millrace.bench.jms;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.millrace.bench.e2e.Cleanup;
import jakarta.jms.ConnectionFactory;

/**
 * The JMS comparison of issue 6: the same {@link JmsHarness} against Millrace and against Apache ActiveMQ Artemis
 * 2.40 in one run. Each broker runs in a JVM of its own on 127.0.0.1 with the same options
 * ({@link JmsBrokers}) and data in a fresh temporary directory: Millrace from
 * {@code broker/target} (share groups from the log start, as queues need), Artemis embedded by
 * {@link ArtemisServer} (persistent journal, defaults). The harness runs in this JVM, against one broker at a time
 * (Millrace first unless {@code --artemis-first}); both stay up, the other idle. Connection factories:
 * {@code new MillraceConnectionFactory(bootstrap)} with its defaults, and Artemis's
 * {@code ActiveMQConnectionFactory("tcp://127.0.0.1:PORT?confirmationWindowSize=1048576")} (Artemis confirms
 * async sends only with a confirmation window), otherwise its defaults.
 *
 * <pre>
 *   mvn -B -q package -DskipTests
 *   java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -cp bench/target/millrace-bench.jar dev.millrace.bench.jms.JmsComparison
 *       [--quick] [--artemis-first] [--only millrace|artemis] [--millrace-set NAME=VALUE]... [--keep] [--home DIR]
 * </pre>
 *
 * <p>{@code --millrace-set} passes a broker setting to Millrace (e.g. {@code log.flush.interval.messages=1} to fsync
 * every append, as Artemis's journal does for every durable send by default).
 *
 * <p>Prints each figure as it comes, then a table (text and Markdown) with Millrace/Artemis ratios and the
 * targets of issue 6 (throughput ratio &ge; 2, p99 &le; Artemis's). Exits 0 when every run produced figures, 1
 * otherwise, 2 on bad arguments.
 */
public final class JmsComparison {

    private JmsComparison() {
    }

    public static void main(String[] args) throws Exception {
        boolean quick = false;
        boolean artemisFirst = false;
        boolean keep = false;
        String only = null;
        List<String> millraceSettings = new ArrayList<>(List.of("group.share.auto.offset.reset=earliest"));
        Path home = Path.of("").toAbsolutePath();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--artemis-first" -> artemisFirst = true;
                case "--keep" -> keep = true;
                case "--only" -> only = args[++i];
                case "--home" -> home = Path.of(args[++i]).toAbsolutePath();
                case "--millrace-set" -> millraceSettings.add(args[++i]);
                default -> {
                    System.err.println("unknown argument " + args[i]
                            + "; usage: JmsComparison [--quick] [--artemis-first] [--only millrace|artemis] "
                            + "[--millrace-set NAME=VALUE]... [--keep] [--home DIR]");
                    System.exit(2);
                }
            }
        }
        JmsHarness.Settings settings = quick
                ? new JmsHarness.Settings("bench", 1024, 20_000, 5, 50_000, 10_000, 5_000, 10, 3, 120_000)
                : new JmsHarness.Settings("bench", 1024, 100_000, 15, 300_000, 10_000, 5_000, 30, 5, 120_000);
        Path workDir = Files.createTempDirectory("millrace-jms-");
        Cleanup cleanup = new Cleanup(workDir, keep);
        Runtime.getRuntime().addShutdownHook(new Thread(cleanup, "jms-cleanup"));
        System.out.println("JMS comparison " + LocalDateTime.now() + ", work directory " + workDir + ", " + settings);
        Map<String, JmsHarness.Result> results = new LinkedHashMap<>();
        int exit = 0;
        try {
            JmsBrokers brokers = JmsBrokers.start(new JmsBrokers.Options(artemisFirst, keep, only, millraceSettings,
                    home), workDir, cleanup);
            for (Map.Entry<String, ConnectionFactory> entry : brokers.factories().entrySet()) {
                String name = entry.getKey();
                System.out.println(name + ":");
                try {
                    results.put(name, new JmsHarness(entry.getValue(), settings)
                            .run(line -> System.out.println("  " + line)));
                } catch (Exception e) {
                    exit = 1;
                    System.out.println("  " + name + " failed: " + e);
                    e.printStackTrace(System.out);
                    brokers.printLogTails(20);
                }
            }
            brokers.stop();
        } finally {
            cleanup.run();
        }
        System.out.println();
        System.out.print(markdown(results));
        System.exit(exit);
    }

    static String markdown(Map<String, JmsHarness.Result> results) {
        JmsHarness.Result m = results.get("Millrace");
        JmsHarness.Result a = results.get("Artemis");
        StringBuilder out = new StringBuilder();
        out.append("| measurement | Millrace | Artemis | Millrace/Artemis | target |\n");
        out.append("|---|---:|---:|---:|:---:|\n");
        row(out, "producer, sync sends (msgs/s)", m == null ? null : m.syncPerSecond(),
                a == null ? null : a.syncPerSecond(), true);
        row(out, "producer, async sends (msgs/s)", m == null ? null : m.asyncPerSecond(),
                a == null ? null : a.asyncPerSecond(), true);
        row(out, "consumer (msgs/s)", m == null ? null : m.consumePerSecond(),
                a == null ? null : a.consumePerSecond(), true);
        row(out, "end-to-end p50 at 5,000 msgs/s (us)", m == null ? null : m.latencyP50Us(),
                a == null ? null : a.latencyP50Us(), false);
        row(out, "end-to-end p99 at 5,000 msgs/s (us)", m == null ? null : m.latencyP99Us(),
                a == null ? null : a.latencyP99Us(), false);
        row(out, "end-to-end max at 5,000 msgs/s (us)", m == null ? null : m.latencyMaxUs(),
                a == null ? null : a.latencyMaxUs(), false);
        return out.toString();
    }

    private static void row(StringBuilder out, String what, Double millrace, Double artemis, boolean throughput) {
        String ratio = millrace == null || artemis == null || artemis == 0 ? "-"
                : String.format(Locale.ROOT, "%.2f", millrace / artemis);
        String target;
        if (millrace == null || artemis == null) {
            target = "-";
        } else if (throughput) {
            target = millrace >= 2 * artemis ? "PASS (>= 2x)" : "MISS (>= 2x)";
        } else if (what.contains("p99")) {
            target = millrace <= artemis ? "PASS (<=)" : "MISS (<=)";
        } else {
            target = "";
        }
        out.append("| ").append(what).append(" | ").append(format(millrace)).append(" | ")
                .append(format(artemis)).append(" | ").append(ratio).append(" | ").append(target).append(" |\n");
    }

    private static String format(Double value) {
        return value == null ? "-" : String.format(Locale.ROOT, "%,.0f", value);
    }
}
