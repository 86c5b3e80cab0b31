package dev.millrace.bench.jms;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.millrace.bench.e2e.BrokerComparison;
import dev.millrace.bench.e2e.Cleanup;

/**
 * Issue 21, "JMS as users meet it": Millrace against Apache ActiveMQ Artemis 2.40 (persistent, 1 KiB
 * {@code BytesMessage}s, the factories of {@link JmsBrokers}) in one run, through the JMS API only, part by part
 * ({@link UserParts}): latency at fixed rates on a fresh broker and client and in steady state, consume throughput from
 * a pre-filled queue in three acknowledgement modes and async-send throughput, the client's footprint per connection,
 * and Millrace's queue consumption against its topic consumption (a plain subscriber by default). Every broker runs in a JVM of its own
 * ({@link BrokerComparison#BROKER_JVM}); fresh clients and footprints run in client JVMs of their own
 * ({@link ChildClient#CLIENT_JVM}); the other parts in this JVM. Brokers run one at a time, Millrace first unless
 * {@code --artemis-first}.
 *
 * <pre>
 *   mvn -B -q package -DskipTests
 *   java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -cp bench/target/millrace-bench.jar dev.millrace.bench.jms.JmsUserComparison
 *       [--quick] [--parts fresh,steady,throughput,queue-topic,footprint] [--messages N] [--warmup-messages N]
 *       [--rates R,R] [--latency-seconds S] [--fresh-unmeasured N] [--connections C,C]
 *       [--topic-subscriber plain|durable]
 *       [--artemis-first] [--only millrace|artemis] [--millrace-set NAME=VALUE]... [--keep] [--home DIR]
 * </pre>
 *
 * <p>Prints each figure as it comes, then one Markdown table: every figure with Millrace's value, Artemis's, the ratio,
 * the target of issue 21 and whether it is met. Exits 0 when every part produced its figures, 1 otherwise, 2 on bad
 * arguments.
 */
public final class JmsUserComparison {

    private static final String USAGE = "usage: JmsUserComparison [--quick] "
            + "[--parts fresh,steady,throughput,queue-topic,footprint] [--messages N] [--warmup-messages N] "
            + "[--rates R,R] [--latency-seconds S] [--fresh-unmeasured N] [--connections C,C] "
            + "[--topic-subscriber plain|durable] [--artemis-first] "
            + "[--only millrace|artemis] [--millrace-set NAME=VALUE]... [--keep] [--home DIR]";

    private JmsUserComparison() {
    }

    public static void main(String[] args) throws Exception {
        UserSettings settings;
        JmsBrokers.Options options;
        try {
            Parsed parsed = parse(args);
            settings = parsed.settings();
            options = parsed.options();
        } catch (IllegalArgumentException | ArrayIndexOutOfBoundsException e) {
            System.err.println("bad arguments: " + e.getMessage() + "; " + USAGE);
            System.exit(2);
            return;
        }
        Path workDir = Files.createTempDirectory("millrace-jms21-");
        Cleanup cleanup = new Cleanup(workDir, options.keep());
        Runtime.getRuntime().addShutdownHook(new Thread(cleanup, "jms-cleanup"));
        System.out.println("JMS as users meet it (issue 21) " + LocalDateTime.now() + ", work directory " + workDir);
        System.out.println("  " + settings);
        System.out.println("  broker JVMs: " + String.join(" ", BrokerComparison.BROKER_JVM) + "; client JVMs (fresh, "
                + "footprint): " + String.join(" ", ChildClient.CLIENT_JVM) + "; this JVM: "
                + java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
        Map<String, UserOutcome> outcomes = new LinkedHashMap<>();
        try {
            UserParts parts = new UserParts(settings, options, workDir, cleanup);
            for (String broker : options.order()) {
                UserOutcome outcome = new UserOutcome();
                outcomes.put(broker.equals("millrace") ? "Millrace" : "Artemis", outcome);
                System.out.println(broker + ":");
                parts.run(broker, outcome);
            }
        } finally {
            cleanup.run();
        }
        UserOutcome none = new UserOutcome();
        List<UserTables.Row> rows = UserTables.rows(outcomes.getOrDefault("Millrace", none),
                outcomes.getOrDefault("Artemis", none), settings);
        System.out.println();
        System.out.print(UserTables.markdown(rows, outcomes));
        boolean failed = outcomes.values().stream().anyMatch(o -> !o.failures.isEmpty());
        System.exit(failed ? 1 : 0);
    }

    /** The parsed command line. */
    record Parsed(UserSettings settings, JmsBrokers.Options options) {
    }

    static Parsed parse(String[] args) {
        boolean quick = Arrays.asList(args).contains("--quick");
        UserSettings d = quick ? UserSettings.quick() : UserSettings.full();
        List<String> parts = d.parts();
        long messages = d.messages();
        long warmup = d.warmupMessages();
        List<Integer> rates = d.rates();
        int seconds = d.latencySeconds();
        long freshUnmeasured = d.freshUnmeasured();
        List<Integer> connections = d.connections();
        String topicSubscriber = d.topicSubscriber();
        boolean artemisFirst = false;
        boolean keep = false;
        String only = null;
        List<String> millraceSettings = new ArrayList<>(List.of("group.share.auto.offset.reset=earliest"));
        Path home = Path.of("").toAbsolutePath();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> { }
                case "--parts" -> parts = List.of(args[++i].split(","));
                case "--messages" -> messages = Long.parseLong(args[++i]);
                case "--warmup-messages" -> warmup = Long.parseLong(args[++i]);
                case "--rates" -> rates = integers(args[++i]);
                case "--latency-seconds" -> seconds = Integer.parseInt(args[++i]);
                case "--fresh-unmeasured" -> freshUnmeasured = Long.parseLong(args[++i]);
                case "--connections" -> connections = integers(args[++i]);
                case "--topic-subscriber" -> topicSubscriber = args[++i];
                case "--artemis-first" -> artemisFirst = true;
                case "--keep" -> keep = true;
                case "--only" -> only = args[++i];
                case "--home" -> home = Path.of(args[++i]).toAbsolutePath();
                case "--millrace-set" -> millraceSettings.add(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (only != null && !only.equals("millrace") && !only.equals("artemis")) {
            throw new IllegalArgumentException("--only takes millrace or artemis, not " + only);
        }
        UserSettings settings = new UserSettings(parts, messages, warmup, rates, seconds, freshUnmeasured,
                d.steadyUnmeasuredSeconds(), connections, topicSubscriber);
        return new Parsed(settings, new JmsBrokers.Options(artemisFirst, keep, only, millraceSettings, home));
    }

    private static List<Integer> integers(String list) {
        List<Integer> values = new ArrayList<>();
        for (String value : list.split(",")) {
            values.add(Integer.parseInt(value.trim()));
        }
        return values;
    }
}
