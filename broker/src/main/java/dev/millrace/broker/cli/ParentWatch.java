package dev.millrace.broker.cli;

import java.util.Optional;

/**
 * Runs an action when another process exits: how a node started by {@code millrace cluster} (or by a
 * test) stops when the process that started it dies, even by SIGKILL, where no shutdown hook of the
 * parent runs. Hidden server option {@code --exit-with-parent <pid>}.
 *
 * <p>The JDK watches the process ({@link ProcessHandle#onExit()}; for a process that is not our child
 * it polls whether it is alive, so the action may run up to about a second late) and runs the action
 * on one of its daemon threads. Thread-safe.
 */
final class ParentWatch {

    private ParentWatch() {
    }

    /**
     * Runs {@code action} once process {@code pid} has exited.
     *
     * @return false, and runs nothing, when no process {@code pid} is running now
     */
    static boolean whenExited(long pid, Runnable action) {
        Optional<ProcessHandle> process = ProcessHandle.of(pid);
        if (process.isEmpty() || !process.get().isAlive()) {
            return false;
        }
        process.get().onExit().thenRun(action);
        return true;
    }
}
