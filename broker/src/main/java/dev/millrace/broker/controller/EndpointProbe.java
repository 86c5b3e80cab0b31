package dev.millrace.broker.controller;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Asks whether anything listens on a broker's advertised endpoint: the active controller's check of a broker that
 * looks dead ({@link Controller#brokerUnreachable}). A refused connection means the broker process is gone (its host
 * answers, its port does not: a killed process's listening socket closes with it), so the broker can be fenced at
 * once instead of after the unreachable grace. Anything else (accepted, timed out, unreachable host) proves nothing
 * and leaves the grace to decide.
 *
 * <p>Thread-safe; never blocks the caller.
 */
@FunctionalInterface
public interface EndpointProbe {

    /** Never reports a refusal: the grace alone decides (tests on manual clocks, fake endpoints). */
    EndpointProbe NONE = (host, port) -> CompletableFuture.completedFuture(false);

    /** Completes with true if a TCP connection to {@code host:port} is refused. */
    CompletableFuture<Boolean> refuses(String host, int port);

    /**
     * Probes with a real TCP connect, given up after {@code connectTimeoutMs}, one at a time on a daemon thread that
     * exists only while there is something to probe.
     */
    static EndpointProbe tcp(int connectTimeoutMs) {
        Executor executor = new ThreadPoolExecutor(0, 1, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "millrace-endpoint-probe");
            t.setDaemon(true);
            return t;
        });
        return (host, port) -> CompletableFuture.supplyAsync(() -> {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(host, port), connectTimeoutMs);
                return false;
            } catch (ConnectException e) {
                return true;
            } catch (IOException e) {
                return false;
            }
        }, executor);
    }
}
