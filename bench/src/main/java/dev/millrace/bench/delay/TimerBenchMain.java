package dev.millrace.bench.delay;

import java.util.Collection;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

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

    private static final String[] FORK_JVM_ARGS = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"};

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
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(TimerBenchmark.class.getName().replace(".", "\\.") + "\\.")
                .forks(1)
                .jvmArgs(FORK_JVM_ARGS)
                .shouldFailOnError(true);
        if (quick) {
            options.warmupIterations(1).warmupTime(TimeValue.seconds(2))
                    .measurementIterations(3).measurementTime(TimeValue.seconds(2));
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
        TimerComparison comparison = TimerComparison.of(results);
        System.out.println();
        System.out.print(comparison.plainTable());
        System.out.println();
        System.out.println("Markdown, for bench/RESULTS.md:");
        System.out.println();
        System.out.print(comparison.markdownTable());
    }
}
