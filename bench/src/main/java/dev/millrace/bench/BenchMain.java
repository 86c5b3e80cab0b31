package dev.millrace.bench;

import java.util.Collection;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import dev.millrace.bench.delay.TimerBenchmark;
import dev.millrace.bench.delay.TimerComparison;

/**
 * Runs the Millrace benchmarks with JMH and prints each Millrace figure beside the raw limit of
 * this machine measured in the same run ({@link RawComparison}).
 *
 * <pre>
 *   java -jar bench/target/millrace-bench.jar [--quick] [REGEX]
 * </pre>
 *
 * <p>{@code --quick}: one fork, one 1 s warmup and three 1 s measurements per benchmark (about a
 * minute and a half in all). Default: one fork, three 3 s warmups and five 3 s measurements.
 * {@code REGEX} selects benchmarks by their full name (as JMH's include does). Temporary files
 * go under {@code java.io.tmpdir}. Exits with 1 if a benchmark fails and 2 on bad arguments; a
 * figure below target is reported, not treated as a failure.
 */
public final class BenchMain {

    static final String[] FORK_JVM_ARGS = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"};
    private static final String ALL = "dev\\.millrace\\.bench\\.";

    private BenchMain() {
    }

    public static void main(String[] args) throws RunnerException {
        boolean quick = false;
        String filter = ALL;
        for (String arg : args) {
            if (arg.equals("--quick")) {
                quick = true;
            } else if (arg.equals("--help") || arg.equals("-h")) {
                usage();
                return;
            } else if (arg.startsWith("-") || !filter.equals(ALL)) {
                System.err.println("Unexpected argument: " + arg);
                usage();
                System.exit(2);
            } else {
                filter = arg;
            }
        }
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(filter)
                .forks(1)
                .jvmArgs(FORK_JVM_ARGS)
                .jvmArgsAppend("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"))
                .shouldFailOnError(true);
        if (quick) {
            options.warmupIterations(1).warmupTime(TimeValue.seconds(1))
                    .measurementIterations(3).measurementTime(TimeValue.seconds(1));
        } else {
            options.warmupIterations(3).warmupTime(TimeValue.seconds(3))
                    .measurementIterations(5).measurementTime(TimeValue.seconds(3));
        }
        Collection<RunResult> results;
        try {
            results = new Runner(options.build()).run();
        } catch (RunnerException e) {
            System.err.println("Benchmark run failed: " + e.getMessage());
            System.exit(1);
            return;
        }
        RawComparison comparison = RawComparison.of(results);
        System.out.println();
        System.out.print(comparison.plainTable());
        System.out.println();
        System.out.println("Markdown, for bench/RESULTS.md:");
        System.out.println();
        System.out.print(comparison.markdownTable());
        if (results.stream().anyMatch(r -> r.getParams().getBenchmark().startsWith(TimerBenchmark.class.getName()))) {
            TimerComparison timers = TimerComparison.of(results);
            System.out.println();
            System.out.print(timers.plainTable());
            System.out.println();
            System.out.print(timers.markdownTable());
        }
    }

    private static void usage() {
        System.out.println("Usage: java -jar millrace-bench.jar [--quick] [REGEX]");
        System.out.println("  --quick  1 warmup and 3 measurement iterations of 1 s (default: 3 x 3 s and 5 x 3 s)");
        System.out.println("  REGEX    run only benchmarks whose full name matches (default: all)");
    }
}
