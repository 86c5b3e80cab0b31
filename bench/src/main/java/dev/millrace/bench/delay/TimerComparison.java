package dev.millrace.bench.delay;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

/**
 * Renders {@link TimerBenchmark}'s figures: the timing wheel's ops/s beside each JDK peer's from the
 * same run, with their 99.9% error, the ratio wheel/peer and whether it reaches the {@value
 * #TARGET}x target, a table for each cancel pattern ({@code cancels}) that ran. A side missing from the run shows "n/a", so the tables can be printed after any
 * run (such as {@code BenchMain}'s, which includes this benchmark). Not thread-safe; build, print,
 * discard.
 */
public final class TimerComparison {

    static final double TARGET = 5.0;
    static final String WHEEL = "timingWheel";

    /** A rate in ops/s with its error; null when the benchmark did not run. */
    record Rate(double opsPerSec, double error) {
    }

    record Row(String label, Rate wheel, Rate peer) {
        boolean complete() {
            return wheel != null && peer != null && peer.opsPerSec > 0;
        }

        double ratio() {
            return wheel.opsPerSec / peer.opsPerSec;
        }

        /** Error of the ratio, propagating both relative errors. */
        double ratioError() {
            double a = relative(wheel);
            double b = relative(peer);
            return ratio() * Math.sqrt(a * a + b * b);
        }

        private static double relative(Rate rate) {
            return Double.isFinite(rate.error) ? rate.error / rate.opsPerSec : 0;
        }

        String verdict() {
            return !complete() ? "n/a" : ratio() >= TARGET ? "PASS" : "BELOW";
        }
    }

    /** One cancel pattern's figures. */
    private record Section(String cancels, Rate wheel, List<Row> rows) {
    }

    private final List<Section> sections;

    private TimerComparison(List<Section> sections) {
        this.sections = sections;
    }

    public static TimerComparison of(Collection<RunResult> results) {
        Map<String, Map<String, Rate>> byPattern = new java.util.TreeMap<>();
        for (RunResult result : results) {
            String full = result.getParams().getBenchmark();
            if (full.startsWith(TimerBenchmark.class.getName() + ".")) {
                String cancels = result.getParams().getParam("cancels");
                byPattern.computeIfAbsent(cancels == null ? "any" : cancels, c -> new HashMap<>())
                        .put(full.substring(full.lastIndexOf('.') + 1), rate(result.getPrimaryResult()));
            }
        }
        List<Section> sections = new ArrayList<>();
        byPattern.forEach((cancels, byMethod) -> {
            Rate wheel = byMethod.get(WHEEL);
            List<Row> rows = new ArrayList<>();
            rows.add(new Row("java.util.concurrent.DelayQueue", wheel, byMethod.get("delayQueue")));
            rows.add(new Row("ScheduledThreadPoolExecutor", wheel, byMethod.get("scheduledThreadPoolExecutor")));
            sections.add(new Section(cancels, wheel, rows));
        });
        return new TimerComparison(sections);
    }

    private static Rate rate(Result<?> result) {
        if (!result.getScoreUnit().equals("ops/s")) {
            throw new IllegalStateException("Expected ops/s, got " + result.getScoreUnit());
        }
        return new Rate(result.getScore(), result.getScoreError());
    }

    public String plainTable() {
        StringBuilder out = new StringBuilder();
        for (Section section : sections) {
            plainTable(section, out);
        }
        return out.toString();
    }

    private static void plainTable(Section section, StringBuilder out) {
        Rate wheel = section.wheel();
        List<Row> rows = section.rows();
        out.append("Schedule + cancel (").append(section.cancels()).append(") + expire, ")
                .append(TimerBenchmark.PENDING).append(" timers pending; wheel: ")
                .append(rate(wheel)).append(" ops/s\n");
        String format = "%-34s %26s %16s  %s%n";
        out.append(String.format(Locale.ROOT, format, "Peer", "peer ops/s", "wheel/peer", "target " + times(TARGET)));
        for (Row row : rows) {
            out.append(String.format(Locale.ROOT, format, row.label(), rate(row.peer()), ratio(row), row.verdict()));
        }
        long below = rows.stream().filter(r -> r.verdict().equals("BELOW")).count();
        long missing = rows.stream().filter(r -> !r.complete()).count();
        if (below > 0) {
            out.append("BELOW: ").append(below).append(" peer(s) not beaten by ");
        } else if (missing > 0) {
            out.append("INCOMPLETE: ").append(missing).append(" pair(s) not run; the others reach ");
        } else {
            out.append("PASS: the wheel reaches ");
        }
        out.append(times(TARGET)).append(" the peer's throughput\n");
    }

    public String markdownTable() {
        StringBuilder out = new StringBuilder();
        for (Section section : sections) {
            if (out.length() > 0) {
                out.append('\n');
            }
            markdownTable(section, out);
        }
        return out.toString();
    }

    private static void markdownTable(Section section, StringBuilder out) {
        Rate wheel = section.wheel();
        List<Row> rows = section.rows();
        out.append("| Schedule + cancel (").append(section.cancels()).append(") + expire, ")
                .append(TimerBenchmark.PENDING)
                .append(" pending | ops/s | wheel/peer | Target ").append(times(TARGET)).append(" |\n");
        out.append("|---|---:|---:|:---:|\n");
        out.append("| timing wheel (SystemTimer) | ").append(rate(wheel)).append(" | | |\n");
        for (Row row : rows) {
            out.append("| ").append(row.label()).append(" | ").append(rate(row.peer())).append(" | ").append(ratio(row))
                    .append(" | ").append(row.verdict()).append(" |\n");
        }
    }

    private static String rate(Rate rate) {
        if (rate == null) {
            return "n/a";
        }
        String error = Double.isFinite(rate.error()) ? String.format(Locale.ROOT, " +/- %,.0f", rate.error()) : "";
        return String.format(Locale.ROOT, "%,.0f", rate.opsPerSec()) + error;
    }

    private static String ratio(Row row) {
        if (!row.complete()) {
            return "n/a";
        }
        return String.format(Locale.ROOT, "%.1fx +/- %.1f", row.ratio(), row.ratioError());
    }

    private static String times(double factor) {
        return String.format(Locale.ROOT, "%.0fx", factor);
    }
}
