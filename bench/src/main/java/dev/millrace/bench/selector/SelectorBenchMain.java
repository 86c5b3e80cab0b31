package dev.millrace.bench.selector;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

import dev.millrace.bench.JmhRuns;

/**
 * Runs {@link SelectorBenchmark} with JMH and its GC profiler, and prints ns/op and bytes allocated per op for each
 * selector and op.
 *
 * <pre>
 *   java -cp bench/target/millrace-bench.jar dev.millrace.bench.selector.SelectorBenchMain [--quick] [OP]
 * </pre>
 *
 * <p>{@code OP}: run only that op ({@code matches}, {@code decodeThenMatch} or {@code compile}); default all three.
 * <p>{@code --quick}: one fork, one 1 s warmup and three 1 s measurements per benchmark (18 benchmarks, about two
 * minutes). Default: three 3 s warmups and five 3 s measurements. Exits with 1 if a benchmark fails, 2 on bad
 * arguments.
 */
public final class SelectorBenchMain {

    private SelectorBenchMain() {
    }

    public static void main(String[] args) {
        boolean quick = false;
        String op = "";
        for (String arg : args) {
            if (arg.equals("--quick")) {
                quick = true;
            } else if (op.isEmpty() && arg.matches("matches|decodeThenMatch|compile")) {
                op = arg + "$";
            } else {
                System.err.println("Unexpected argument: " + arg);
                System.err.println("Usage: java -cp millrace-bench.jar " + SelectorBenchMain.class.getName()
                        + " [--quick] [matches|decodeThenMatch|compile]");
                System.exit(2);
            }
        }
        Collection<RunResult> results = JmhRuns.run(SelectorBenchmark.class.getName().replace(".", "\\.") + "\\." + op,
                quick, 1, GCProfiler.class);
        List<RunResult> sorted = new ArrayList<>(results);
        sorted.sort(Comparator.comparing((RunResult r) -> r.getParams().getBenchmark())
                .thenComparing(r -> r.getParams().getParam("selector")));
        System.out.println();
        System.out.println("| op | selector | ns/op | B/op |");
        System.out.println("|---|---|---:|---:|");
        for (RunResult r : sorted) {
            String benchmark = r.getParams().getBenchmark();
            String opName = benchmark.substring(benchmark.lastIndexOf('.') + 1);
            String name = r.getParams().getParam("selector");
            Result<?> time = r.getPrimaryResult();
            Result<?> alloc = r.getSecondaryResults().get("gc.alloc.rate.norm");
            System.out.printf(Locale.ROOT, "| %s | `%s` | %.1f +/- %.1f | %s |%n", opName,
                    SelectorBenchmark.SELECTORS.get(name), time.getScore(), time.getScoreError(),
                    alloc == null ? "n/a" : String.format(Locale.ROOT, "%.1f", alloc.getScore()));
        }
    }
}
