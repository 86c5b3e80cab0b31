package dev.millrace.bench.jms;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class JitActivityTest {

    @Test
    void shouldCountOnlyTheCompilerThreadsTicks() {
        String c2 = "4242 (C2 CompilerThre) S 1 4240 4240 0 -1 4194368 0 0 0 0 150 25 0 0 20 0 60 0 100 0 0";
        String c1 = "4243 (C1 CompilerThre) R 1 4240 4240 0 -1 4194368 0 0 0 0 7 3 0 0 20 0 60 0 100 0 0";
        String worker = "4250 (millrace-reques) S 1 4240 4240 0 -1 4194368 0 0 0 0 900 100 0 0 20 0 60 0 100 0 0";
        String odd = "4251 (a (b) c) S 1 4240 4240 0 -1 4194368 0 0 0 0 9 9 0 0 20 0 60 0 100 0 0";

        assertThat(JitActivity.compilerTicks(c2)).isEqualTo(175);
        assertThat(JitActivity.compilerTicks(c1)).isEqualTo(10);
        assertThat(JitActivity.compilerTicks(worker)).isZero();
        assertThat(JitActivity.compilerTicks(odd)).isZero();
    }

    @Test
    void shouldReadThisJvmsCompilerThreadsOnLinux() {
        long millis = JitActivity.compilerCpuMillis(ProcessHandle.current().pid());
        if (java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/self/task"))) {
            assertThat(millis).as("a JVM that ran this far has compiled something").isPositive();
        } else {
            assertThat(millis).isEqualTo(-1);
        }
        assertThat(JitActivity.compilerCpuMillis(Long.MAX_VALUE)).as("no such process").isEqualTo(-1);
    }
}
