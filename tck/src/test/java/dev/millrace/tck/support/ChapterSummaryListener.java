package dev.millrace.tck.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Prints, when the run ends, one line per chapter (the display name of the top-level test class, e.g. "3.8 Message
 * selectors") with its passed, failed and skipped tests, in section order, and writes the same table to
 * {@code target/tck-summary-<target>.txt}. A skipped class counts all its tests as skipped. Registered through
 * {@code META-INF/services/org.junit.platform.launcher.TestExecutionListener}.
 *
 * <p>JUnit may report from several threads: the counting methods are synchronized.
 */
public final class ChapterSummaryListener implements TestExecutionListener {

    private final Map<String, int[]> counts = new TreeMap<>(ChapterSummaryListener::compareSections);
    private TestPlan plan;

    @Override
    public synchronized void testPlanExecutionStarted(TestPlan testPlan) {
        plan = testPlan;
        counts.clear();
    }

    @Override
    public synchronized void executionSkipped(TestIdentifier identifier, String reason) {
        if (identifier.isTest()) {
            count(identifier, 2);
        } else {
            plan.getDescendants(identifier).stream().filter(TestIdentifier::isTest).forEach(t -> count(t, 2));
        }
    }

    @Override
    public synchronized void executionFinished(TestIdentifier identifier, TestExecutionResult result) {
        if (identifier.isTest()) {
            count(identifier, result.getStatus() == TestExecutionResult.Status.SUCCESSFUL ? 0 : 1);
        }
    }

    @Override
    public synchronized void testPlanExecutionFinished(TestPlan testPlan) {
        if (counts.isEmpty()) {
            return;
        }
        List<String> lines = new ArrayList<>();
        String target = System.getProperty("tck.target", "millrace");
        lines.add("Jakarta Messaging 3.1 conformance (tck) against " + target + ", per chapter:");
        lines.add(String.format("%-62s %7s %7s %8s", "chapter", "passed", "failed", "skipped"));
        int[] total = new int[3];
        counts.forEach((chapter, c) -> {
            lines.add(String.format("%-62s %7d %7d %8d", chapter, c[0], c[1], c[2]));
            for (int i = 0; i < 3; i++) {
                total[i] += c[i];
            }
        });
        lines.add(String.format("%-62s %7d %7d %8d", "(all chapters)", total[0], total[1], total[2]));
        lines.forEach(System.out::println);
        try {
            Path target0 = Path.of("target");
            if (Files.isDirectory(target0)) {
                Files.write(target0.resolve("tck-summary-" + target + ".txt"), lines);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void count(TestIdentifier test, int column) {
        if (plan == null) {
            return;
        }
        counts.computeIfAbsent(chapter(test), k -> new int[3])[column]++;
    }

    /** The display name of the outermost test class above {@code test}. */
    private String chapter(TestIdentifier test) {
        String chapter = "(no class)";
        Optional<TestIdentifier> node = Optional.of(test);
        while (node.isPresent()) {
            TestIdentifier current = node.get();
            if (current.getSource().filter(ClassSource.class::isInstance).isPresent()) {
                chapter = current.getDisplayName();
            }
            node = plan.getParent(current);
        }
        return chapter;
    }

    /** Orders "3.5.4 ..." before "3.8 ..." before "10 ...": by the numbers of the leading section, then by text. */
    static int compareSections(String a, String b) {
        String[] pa = a.split(" ", 2)[0].split("\\.");
        String[] pb = b.split(" ", 2)[0].split("\\.");
        for (int i = 0; i < Math.min(pa.length, pb.length); i++) {
            int c = Integer.compare(number(pa[i]), number(pb[i]));
            if (c != 0) {
                return c;
            }
        }
        int c = Integer.compare(pa.length, pb.length);
        return c != 0 ? c : a.compareTo(b);
    }

    private static int number(String part) {
        try {
            return Integer.parseInt(part);
        } catch (NumberFormatException e) {
            return Integer.MAX_VALUE;
        }
    }
}
