package dev.millrace.bench;

import java.util.Collection;

import org.openjdk.jmh.profile.Profiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs JMH benchmarks the way every bench main program here does: one fork with
 * {@link #FORK_JVM_ARGS}, temporary files under this JVM's {@code java.io.tmpdir}, and either the
 * quick settings (one warmup and three measurements of {@code quickSeconds}) or the full ones (three
 * warmups and five measurements of 3 s). A failing benchmark ends the program with status 1.
 */
public final class JmhRuns {

    /** Heap fixed and pre-touched: first touch of fresh memory is slow on this kind of machine. */
    public static final String[] FORK_JVM_ARGS = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"};

    private JmhRuns() {
    }

    /** Runs the benchmarks whose full name matches {@code include}; returns their results. */
    public static Collection<RunResult> run(String include, boolean quick, int quickSeconds) {
        return run(include, quick, quickSeconds, new Class[0]);
    }

    /**
     * As {@link #run(String, boolean, int)}, with JMH profilers attached (for example
     * {@code GCProfiler}, whose {@code gc.alloc.rate.norm} secondary result is bytes allocated per op).
     */
    @SafeVarargs
    public static Collection<RunResult> run(String include, boolean quick, int quickSeconds,
            Class<? extends Profiler>... profilers) {
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(include)
                .forks(1)
                .jvmArgs(FORK_JVM_ARGS)
                .jvmArgsAppend("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"))
                .shouldFailOnError(true);
        for (Class<? extends Profiler> profiler : profilers) {
            options.addProfiler(profiler);
        }
        if (quick) {
            options.warmupIterations(1).warmupTime(TimeValue.seconds(quickSeconds))
                    .measurementIterations(3).measurementTime(TimeValue.seconds(quickSeconds));
        } else {
            options.warmupIterations(3).warmupTime(TimeValue.seconds(3))
                    .measurementIterations(5).measurementTime(TimeValue.seconds(3));
        }
        try {
            return new Runner(options.build()).run();
        } catch (RunnerException e) {
            System.err.println("Benchmark run failed: " + e.getMessage());
            System.exit(1);
            throw new IllegalStateException(e);
        }
    }
}
