package dev.millrace.bench.jms;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.activemq.artemis.jms.client.ActiveMQXAConnectionFactory;
import org.h2.jdbcx.JdbcDataSource;

import com.arjuna.ats.arjuna.common.arjPropertyManager;

import dev.millrace.bench.e2e.BrokerNode;
import dev.millrace.bench.e2e.Cleanup;
import dev.millrace.jms.MillraceXAConnectionFactory;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.XAConnectionFactory;
import jakarta.transaction.TransactionManager;

/**
 * The XA comparison of issue 24: consume-one, send-one, insert-one-row global transactions per second
 * ({@link XaTransfers}) with Millrace and with Apache ActiveMQ Artemis 2.40 (embedded in a JVM of its own, its
 * {@code ActiveMQXAConnectionFactory}), the same transaction manager (Narayana JTA, standalone, in this JVM, its
 * object store under the work directory) and the same database (H2, file-based under the work directory, one table per
 * broker), at 1 and 4 threads, in one run. Brokers are started as {@link JmsBrokers} starts them, one at a time
 * (Millrace first unless {@code --artemis-first}), each stopped before the next starts.
 *
 * <pre>
 *   mvn -B -q package -DskipTests
 *   java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -cp bench/target/millrace-bench.jar dev.millrace.bench.jms.XaComparison
 *       [--threads 1,4] [--transactions N] [--warmup N] [--warmup-rounds N] [--jit-share F] [--artemis-first]
 *       [--only millrace|artemis] [--millrace-set NAME=VALUE]... [--keep] [--home DIR]
 * </pre>
 *
 * <p>{@code --transactions} is the measured count per thread count (split over the threads). Before it, warm-up
 * rounds of {@code --warmup} unmeasured transactions per thread run until the JIT compilers have settled: a round in
 * which the compiler threads of neither the broker's JVM nor this one ({@link JitActivity}) used more than
 * {@code --jit-share} (0.05) of the round's time, or {@code --warmup-rounds} (10) rounds; each round is printed with
 * what the compilers used. This client JVM is shared by both brokers' runs (Narayana and H2 compiled for the first
 * broker stay compiled for the second): the rounds give each broker its own settled start either way. After the runs it checks that every transaction left one row and one output
 * message. Prints a Markdown table with Millrace/Artemis ratios and the target (Millrace &ge; 1.5x Artemis). Exits 0
 * when every run produced figures and the checks held, 1 otherwise, 2 on bad arguments.
 */
public final class XaComparison {

    private static final String USAGE = "usage: XaComparison [--threads 1,4] [--transactions N] [--warmup N] "
            + "[--warmup-rounds N] [--jit-share F] [--artemis-first] [--only millrace|artemis] "
            + "[--millrace-set NAME=VALUE]... [--keep] [--home DIR]";

    private XaComparison() {
    }

    public static void main(String[] args) throws Exception {
        boolean artemisFirst = false;
        boolean keep = false;
        String only = null;
        List<Integer> threadCounts = List.of(1, 4);
        int transactions = 4_000;
        int warmup = 500;
        int warmupRounds = 10;
        double jitShare = 0.05;
        List<String> millraceSettings = new ArrayList<>(List.of("group.share.auto.offset.reset=earliest"));
        Path home = Path.of("").toAbsolutePath();
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--artemis-first" -> artemisFirst = true;
                    case "--keep" -> keep = true;
                    case "--only" -> only = args[++i];
                    case "--home" -> home = Path.of(args[++i]).toAbsolutePath();
                    case "--millrace-set" -> millraceSettings.add(args[++i]);
                    case "--threads" -> threadCounts = java.util.Arrays.stream(args[++i].split(","))
                            .map(Integer::parseInt).toList();
                    case "--transactions" -> transactions = Integer.parseInt(args[++i]);
                    case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                    case "--warmup-rounds" -> warmupRounds = Integer.parseInt(args[++i]);
                    case "--jit-share" -> jitShare = Double.parseDouble(args[++i]);
                    default -> throw new IllegalArgumentException("unknown argument " + args[i]);
                }
            }
        } catch (RuntimeException e) {
            System.err.println(e.getMessage() + "; " + USAGE);
            System.exit(2);
        }
        Path workDir = Files.createTempDirectory("millrace-xa-");
        Cleanup cleanup = new Cleanup(workDir, keep);
        Runtime.getRuntime().addShutdownHook(new Thread(cleanup, "xa-cleanup"));
        System.out.println("XA comparison (issue 24) " + LocalDateTime.now() + ", work directory " + workDir
                + ", threads " + threadCounts + ", " + transactions + " measured transactions per thread count after"
                + " rounds of " + warmup + " per thread until the JIT compilers used under " + jitShare
                + " of a round's time (at most " + warmupRounds + " rounds)");
        arjPropertyManager.getObjectStoreEnvironmentBean().setObjectStoreDir(workDir.resolve("narayana").toString());
        arjPropertyManager.getCoreEnvironmentBean().setNodeIdentifier("millrace-xa-bench");
        TransactionManager tm = com.arjuna.ats.jta.TransactionManager.transactionManager();
        JdbcDataSource database = new JdbcDataSource();
        database.setURL("jdbc:h2:" + workDir.resolve("h2").resolve("bench") + ";DB_CLOSE_DELAY=-1");

        JmsBrokers.Options options = new JmsBrokers.Options(artemisFirst, keep, only, millraceSettings, home);
        Map<String, Map<Integer, XaTransfers.Result>> results = new LinkedHashMap<>();
        boolean failed = false;
        try {
            for (String name : options.order()) {
                BrokerNode node = JmsBrokers.startNode(name, options, workDir.resolve(name), cleanup);
                try {
                    results.put(node.name(), runBroker(node, tm, database, threadCounts, transactions,
                            new WarmUp(warmup, warmupRounds, jitShare)));
                } catch (Exception e) {
                    failed = true;
                    System.out.println("  " + node.name() + " failed: " + e);
                    e.printStackTrace(System.out);
                    node.printLogTail(30);
                } finally {
                    node.stop();
                }
            }
        } finally {
            cleanup.run();
        }
        System.out.println();
        System.out.print(table(results, threadCounts));
        System.exit(failed || results.size() != options.order().size() ? 1 : 0);
    }

    /** Warm-up rounds of {@code perThread} transactions per thread, until the compilers settle. */
    record WarmUp(int perThread, int maxRounds, double jitShare) {
    }

    private static Map<Integer, XaTransfers.Result> runBroker(BrokerNode node, TransactionManager tm,
                                                              JdbcDataSource database, List<Integer> threadCounts,
                                                              int transactions, WarmUp warmUp) throws Exception {
        System.out.println(node.name() + ":");
        ConnectionFactory plain = JmsBrokers.factory(node.name(), node.bootstrap());
        XAConnectionFactory xa = switch (node.name()) {
            // no read-ahead on either side (Millrace prefetch=1, Artemis consumerWindowSize=0): the input is filled
            // before the run, and with their defaults (1,000 messages, 1 MiB) the first XA consumers would take all
            // of it ahead and leave the other threads waiting until they have worked through it
            case "Millrace" -> millrace(node.bootstrap());
            case "Artemis" -> new ActiveMQXAConnectionFactory("tcp://" + node.bootstrap() + "?consumerWindowSize=0");
            default -> throw new IllegalArgumentException(node.name());
        };
        String prefix = "xa" + node.name().toLowerCase(Locale.ROOT);
        // the table is shared with the other broker's runs, its ids prefixed by the broker's name
        XaTransfers transfers = new XaTransfers(plain, xa, tm, database, prefix, 256);
        long rowsBefore = transfers.rows();
        long total = 0;
        Map<Integer, XaTransfers.Result> byThreads = new LinkedHashMap<>();
        for (int threads : threadCounts) {
            total += warmUp(node, transfers, threads, warmUp);
            int measured = perThread(transactions, threads) * threads;
            transfers.fill(measured);
            total += measured;
            byThreads.put(threads, transfers.run(threads, 0, perThread(transactions, threads),
                    line -> System.out.println("  " + line)));
        }
        long rows = transfers.rows() - rowsBefore;
        long outputs = transfers.drainOutput();
        System.out.println("  check: " + total + " transactions, " + rows + " rows, " + outputs + " output messages");
        if (rows != total || outputs != total) {
            throw new IllegalStateException(node.name() + ": " + total + " committed transactions left " + rows
                    + " rows and " + outputs + " output messages");
        }
        return byThreads;
    }

    /** Runs warm-up rounds at {@code threads} threads until the compilers settle; the transactions it ran. */
    private static long warmUp(BrokerNode node, XaTransfers transfers, int threads, WarmUp warmUp) throws Exception {
        long self = ProcessHandle.current().pid();
        long ran = 0;
        for (int round = 1; round <= warmUp.maxRounds(); round++) {
            int count = warmUp.perThread() * threads;
            transfers.fill(count);
            long brokerBefore = JitActivity.compilerCpuMillis(node.pid());
            long selfBefore = JitActivity.compilerCpuMillis(self);
            long start = System.nanoTime();
            transfers.run(threads, 0, warmUp.perThread(), line -> { });
            long wallMs = Math.max(1, (System.nanoTime() - start) / 1_000_000);
            ran += count;
            long brokerMs = JitActivity.compilerCpuMillis(node.pid()) - brokerBefore;
            long selfMs = JitActivity.compilerCpuMillis(self) - selfBefore;
            boolean settled = brokerBefore >= 0 && selfBefore >= 0
                    && Math.max(brokerMs, selfMs) <= warmUp.jitShare() * wallMs;
            System.out.printf(Locale.ROOT, "  warm-up %d thread(s), round %d: %,d transactions in %,d ms; compilers:"
                    + " broker %,d ms, client %,d ms%s%n", threads, round, count, wallMs, brokerMs, selfMs,
                    settled ? " (settled)" : round == warmUp.maxRounds() ? " (not settled: measuring anyway)" : "");
            if (settled) {
                break;
            }
        }
        return ran;
    }

    private static MillraceXAConnectionFactory millrace(String bootstrap) {
        MillraceXAConnectionFactory f = new MillraceXAConnectionFactory(bootstrap);
        f.setPrefetch(1);
        return f;
    }

    private static int perThread(int transactions, int threads) {
        return Math.max(1, transactions / threads);
    }

    static String table(Map<String, Map<Integer, XaTransfers.Result>> results, List<Integer> threadCounts) {
        StringBuilder out = new StringBuilder(
                "| threads | Millrace tx/s | Artemis tx/s | ratio (target >= 1.5) | Millrace p50 / p99 ms "
                        + "| Artemis p50 / p99 ms |\n|---:|---:|---:|---:|---|---|\n");
        Map<Integer, XaTransfers.Result> m = results.getOrDefault("Millrace", Map.of());
        Map<Integer, XaTransfers.Result> a = results.getOrDefault("Artemis", Map.of());
        for (int threads : threadCounts) {
            XaTransfers.Result mr = m.get(threads);
            XaTransfers.Result ar = a.get(threads);
            out.append("| ").append(threads)
                    .append(" | ").append(mr == null ? "-" : String.format(Locale.ROOT, "%,.0f", mr.perSecond()))
                    .append(" | ").append(ar == null ? "-" : String.format(Locale.ROOT, "%,.0f", ar.perSecond()))
                    .append(" | ").append(mr == null || ar == null ? "-"
                            : String.format(Locale.ROOT, "%.2f", mr.perSecond() / ar.perSecond()))
                    .append(" | ").append(latency(mr)).append(" | ").append(latency(ar)).append(" |\n");
        }
        return out.toString();
    }

    private static String latency(XaTransfers.Result r) {
        return r == null ? "-" : String.format(Locale.ROOT, "%.2f / %.2f", r.latency().getValueAtPercentile(50) / 1e6,
                r.latency().getValueAtPercentile(99) / 1e6);
    }
}
