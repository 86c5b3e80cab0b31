package dev.millrace.bench;

import java.util.Collection;

import org.openjdk.jmh.results.RunResult;

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

    private static final String ALL = "dev\\.millrace\\.bench\\.";

    private BenchMain() {
    }

    public static void main(String[] args) {
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
        Collection<RunResult> results = JmhRuns.run(filter, quick, 1);
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
