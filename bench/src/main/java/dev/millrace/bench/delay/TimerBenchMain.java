package dev.millrace.bench.delay;

import java.util.Collection;

import org.openjdk.jmh.results.RunResult;

import dev.millrace.bench.JmhRuns;

/**
 * Runs {@link TimerBenchmark} with JMH and prints the timing wheel's throughput beside
 * {@code DelayQueue}'s and {@code ScheduledThreadPoolExecutor}'s ({@link TimerComparison}).
 *
 * <pre>
 *   java -cp bench/target/millrace-bench.jar dev.millrace.bench.delay.TimerBenchMain [--quick]
 * </pre>
 *
 * <p>{@code --quick}: one fork, one 2 s warmup and three 2 s measurements per benchmark. Default:
 * one fork, three 3 s warmups and five 3 s measurements. The {@code DelayQueue} side is slow by
 * nature (its cancel scans a million entries), so its iterations hold only a few thousand ops.
 * Exits with 1 if a benchmark fails and 2 on bad arguments; a ratio below target is reported, not
 * treated as a failure.
 */
public final class TimerBenchMain {

    private TimerBenchMain() {
    }

    public static void main(String[] args) {
        boolean quick = false;
        for (String arg : args) {
            if (arg.equals("--quick")) {
                quick = true;
            } else {
                System.err.println("Unexpected argument: " + arg);
                System.err.println("Usage: java -cp millrace-bench.jar " + TimerBenchMain.class.getName()
                        + " [--quick]");
                System.exit(2);
            }
        }
        Collection<RunResult> results = JmhRuns.run(TimerBenchmark.class.getName().replace(".", "\\.") + "\\.",
                quick, 2);
        TimerComparison comparison = TimerComparison.of(results);
        System.out.println();
        System.out.print(comparison.plainTable());
        System.out.println();
        System.out.println("Markdown, for bench/RESULTS.md:");
        System.out.println();
        System.out.print(comparison.markdownTable());
    }
}
