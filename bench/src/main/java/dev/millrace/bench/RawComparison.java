package dev.millrace.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.millrace.bench.log.Batches;
import dev.millrace.bench.log.LogReadBenchmark;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

/**
 * Pairs each Millrace benchmark with its raw peer and renders the rates, in MB/s (ops/s times the
 * bytes one op moves, over 10^6), with their 99.9% error, the ratio Millrace/raw and whether it
 * meets the {@value #TARGET} target. A pair with a side missing from the run shows "n/a".
 */
final class RawComparison {

    static final double TARGET = 0.80;

    /** One Millrace benchmark and its raw peer, by {@code Class.method}, and the bytes one op moves. */
    record Pair(String label, String millrace, String raw, long bytesPerOp) {
    }

    /** A rate in MB/s with its error; null when the benchmark did not run. */
    record Rate(double mbPerSec, double error) {
    }

    record Row(Pair pair, Rate millrace, Rate raw) {
        boolean complete() {
            return millrace != null && raw != null && raw.mbPerSec > 0;
        }

        double ratio() {
            return millrace.mbPerSec / raw.mbPerSec;
        }

        /** Error of the ratio, propagating both relative errors. */
        double ratioError() {
            double a = relative(millrace);
            double b = relative(raw);
            return ratio() * Math.sqrt(a * a + b * b);
        }

        private static double relative(Rate rate) {
            return Double.isFinite(rate.error) ? rate.error / rate.mbPerSec : 0;
        }

        String verdict() {
            return !complete() ? "n/a" : ratio() >= TARGET ? "PASS" : "BELOW";
        }
    }

    static List<Pair> pairs() {
        long batch = Batches.batchSizeInBytes();
        return List.of(
                new Pair("append, no fsync (1 thread)", "LogAppendBenchmark.appendNoFsync",
                        "LogAppendBenchmark.rawWriteNoFsync", batch),
                new Pair("append, group commit (4 threads)", "LogAppendBenchmark.appendGroupCommit",
                        "LogAppendBenchmark.rawWriteGroupCommit", batch),
                new Pair("sequential read, page cache (1 thread)", "LogReadBenchmark.read",
                        "LogReadBenchmark.rawRead", LogReadBenchmark.READ_BYTES));
    }

    private final List<Row> rows;

    private RawComparison(List<Row> rows) {
        this.rows = rows;
    }

    static RawComparison of(Collection<RunResult> results) {
        Map<String, Result<?>> byName = new HashMap<>();
        for (RunResult result : results) {
            String full = result.getParams().getBenchmark();
            int method = full.lastIndexOf('.');
            String shortName = full.substring(full.lastIndexOf('.', method - 1) + 1);
            byName.put(shortName, result.getPrimaryResult());
        }
        List<Row> rows = new ArrayList<>();
        for (Pair pair : pairs()) {
            rows.add(new Row(pair, rate(byName.get(pair.millrace()), pair.bytesPerOp()),
                    rate(byName.get(pair.raw()), pair.bytesPerOp())));
        }
        return new RawComparison(rows);
    }

    private static Rate rate(Result<?> result, long bytesPerOp) {
        if (result == null) {
            return null;
        }
        if (!result.getScoreUnit().equals("ops/s")) {
            throw new IllegalStateException("Expected ops/s, got " + result.getScoreUnit());
        }
        return new Rate(result.getScore() * bytesPerOp / 1e6, result.getScoreError() * bytesPerOp / 1e6);
    }

    String plainTable() {
        StringBuilder out = new StringBuilder();
        String format = "%-40s %18s %18s %14s  %s%n";
        out.append(String.format(Locale.ROOT, format, "Benchmark", "Millrace MB/s", "raw MB/s", "Millrace/raw",
                "target " + percent(TARGET)));
        for (Row row : rows) {
            out.append(String.format(Locale.ROOT, format, row.pair().label(), rate(row.millrace()), rate(row.raw()),
                    ratio(row), row.verdict()));
        }
        long below = rows.stream().filter(r -> r.verdict().equals("BELOW")).count();
        long missing = rows.stream().filter(r -> !r.complete()).count();
        if (below > 0) {
            out.append("BELOW: ").append(below).append(" figure(s) under ");
        } else if (missing > 0) {
            out.append("INCOMPLETE: ").append(missing).append(" pair(s) not run; the others reach ");
        } else {
            out.append("PASS: every figure reaches ");
        }
        out.append(percent(TARGET)).append(" of the raw rate\n");
        return out.toString();
    }

    String markdownTable() {
        StringBuilder out = new StringBuilder();
        out.append("| Benchmark | Millrace MB/s | raw MB/s | Millrace/raw | Target ").append(percent(TARGET))
                .append(" |\n");
        out.append("|---|---:|---:|---:|:---:|\n");
        for (Row row : rows) {
            out.append("| ").append(row.pair().label()).append(" | ").append(rate(row.millrace())).append(" | ")
                    .append(rate(row.raw())).append(" | ").append(ratio(row)).append(" | ").append(row.verdict())
                    .append(" |\n");
        }
        return out.toString();
    }

    private static String rate(Rate rate) {
        if (rate == null) {
            return "n/a";
        }
        String error = Double.isFinite(rate.error()) ? String.format(Locale.ROOT, " +/- %.1f", rate.error()) : "";
        return String.format(Locale.ROOT, "%.1f", rate.mbPerSec()) + error;
    }

    private static String ratio(Row row) {
        if (!row.complete()) {
            return "n/a";
        }
        return String.format(Locale.ROOT, "%.0f%% +/- %.0f", row.ratio() * 100, row.ratioError() * 100);
    }

    private static String percent(double fraction) {
        return String.format(Locale.ROOT, "%.0f%%", fraction * 100);
    }
}
