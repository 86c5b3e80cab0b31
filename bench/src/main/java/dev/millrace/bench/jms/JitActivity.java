package dev.millrace.bench.jms;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * CPU time a JVM's JIT compiler threads have used, read from Linux's {@code /proc/<pid>/task/<tid>/stat}: the
 * threads HotSpot names {@code C1 CompilerThread<n>} and {@code C2 CompilerThread<n>} (the kernel keeps the first 15
 * characters of a thread's name). A warm-up that ends once a round of work costs the compilers little of its time
 * measures each broker at steady state rather than while its hot paths are still being compiled. Elsewhere than Linux
 * it answers -1 (unknown).
 *
 * <pre>
 *   /proc/PID/task/TID/stat:  TID (C2 CompilerThre) S ppid ... utime stime ...
 *                                  ^ comm, in parentheses          ^ fields 14 and 15, in clock ticks
 * </pre>
 */
final class JitActivity {

    /** Clock ticks per second of /proc's times ({@code getconf CLK_TCK}; 100 on Linux for x86 and arm). */
    private static final int TICKS_PER_SECOND = 100;

    private JitActivity() {
    }

    /** Milliseconds of CPU the compiler threads of process {@code pid} have used, or -1 if unknown. */
    static long compilerCpuMillis(long pid) {
        Path tasks = Path.of("/proc", String.valueOf(pid), "task");
        if (!Files.isDirectory(tasks)) {
            return -1;
        }
        long ticks = 0;
        try (Stream<Path> threads = Files.list(tasks)) {
            for (Path thread : (Iterable<Path>) threads::iterator) {
                ticks += compilerTicks(thread.resolve("stat"));
            }
        } catch (IOException e) {
            return -1;
        }
        return ticks * 1000 / TICKS_PER_SECOND;
    }

    /** utime + stime of a thread whose comm is a compiler thread's; 0 for others (or one that just ended). */
    static long compilerTicks(Path stat) {
        String line;
        try {
            line = Files.readString(stat);
        } catch (IOException ended) {
            return 0;
        }
        return compilerTicks(line);
    }

    static long compilerTicks(String statLine) {
        int open = statLine.indexOf('(');
        int close = statLine.lastIndexOf(')');
        if (open < 0 || close < open) {
            return 0;
        }
        String comm = statLine.substring(open + 1, close);
        if (!comm.startsWith("C1 CompilerThre") && !comm.startsWith("C2 CompilerThre")) {
            return 0;
        }
        // after ") ": state is field 3; utime and stime are fields 14 and 15 (index 11 and 12 from state)
        String[] fields = statLine.substring(close + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }
}
