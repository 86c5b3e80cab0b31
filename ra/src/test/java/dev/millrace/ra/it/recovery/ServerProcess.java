package dev.millrace.ra.it.recovery;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;

/** An application server that a test starts as a process of its own and kills with SIGKILL. */
interface ServerProcess extends AutoCloseable {

    /** Starts the server (again); its applications deploy as the server boots. */
    void start() throws IOException, InterruptedException;

    /**
     * Waits until {@code url} answers 200 (the application is deployed and serving), failing with the server log's
     * tail if the server dies or {@code timeout} passes. Returns the body.
     */
    String awaitOk(URI url, Duration timeout) throws IOException, InterruptedException;

    /** SIGKILL to the server's JVM, then waits until it is gone. Does nothing if it is not running. */
    void kill() throws InterruptedException;

    /** The last lines of the server's log. */
    String logTail();

    /** Kills the server if it still runs. */
    @Override
    default void close() throws InterruptedException {
        kill();
    }
}
