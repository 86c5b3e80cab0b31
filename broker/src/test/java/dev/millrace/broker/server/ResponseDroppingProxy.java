package dev.millrace.broker.server;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.protocol.ApiKeys;

/**
 * A TCP proxy on loopback between Kafka clients and a broker that loses and delays responses: it
 * forwards every request; for a seeded random share of Produce requests it closes the client's
 * connection instead of forwarding the broker's answer, as a network failure after the broker
 * wrote the data would; for another share it holds the answer back for a while (the connection's
 * later answers wait behind it, as on a slow link). A held answer that outlasts the client's
 * request timeout makes it give up on the connection and retry. Either way the producer retries
 * a batch that is already in the log.
 *
 * <p>Frames are read whole in both directions (int32 size prefix), so a drop never cuts a frame.
 */
final class ResponseDroppingProxy implements AutoCloseable {

    private final ServerSocket server;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "response-dropping-proxy");
        t.setDaemon(true);
        return t;
    });
    private final Random random;
    private final double dropShare;
    private final double delayShare;
    private final long delayMs;
    private final AtomicInteger dropped = new AtomicInteger();
    private final AtomicInteger delayed = new AtomicInteger();
    private volatile int targetPort;

    ResponseDroppingProxy(long seed, double dropShare) throws IOException {
        this(seed, dropShare, 0, 0);
    }

    ResponseDroppingProxy(long seed, double dropShare, double delayShare, long delayMs) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.random = new Random(seed);
        this.dropShare = dropShare;
        this.delayShare = delayShare;
        this.delayMs = delayMs;
    }

    int delayed() {
        return delayed.get();
    }

    int port() {
        return server.getLocalPort();
    }

    int dropped() {
        return dropped.get();
    }

    /** Starts accepting once the broker's port is known. */
    void start(int brokerPort) {
        this.targetPort = brokerPort;
        threads.execute(this::acceptLoop);
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket broker = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                Map<Integer, Action> dropByCorrelation = new ConcurrentHashMap<>();
                threads.execute(() -> pumpRequests(client, broker, dropByCorrelation));
                threads.execute(() -> pumpResponses(broker, client, dropByCorrelation));
            } catch (IOException e) {
                return;
            }
        }
    }

    private enum Action { DROP, DELAY }

    private void pumpRequests(Socket client, Socket broker, Map<Integer, Action> dropByCorrelation) {
        try (DataInputStream in = new DataInputStream(client.getInputStream());
             DataOutputStream out = new DataOutputStream(broker.getOutputStream())) {
            while (true) {
                byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                short apiKey = (short) (((frame[0] & 0xff) << 8) | (frame[1] & 0xff));
                int correlationId = ((frame[4] & 0xff) << 24) | ((frame[5] & 0xff) << 16) | ((frame[6] & 0xff) << 8)
                        | (frame[7] & 0xff);
                Action action = apiKey == ApiKeys.PRODUCE.id ? nextAction() : null;
                if (action != null) {
                    dropByCorrelation.put(correlationId, action);
                }
                out.writeInt(frame.length);
                out.write(frame);
                out.flush();
            }
        } catch (IOException e) {
            closeQuietly(client, broker);
        }
    }

    private void pumpResponses(Socket broker, Socket client, Map<Integer, Action> dropByCorrelation) {
        try (DataInputStream in = new DataInputStream(broker.getInputStream());
             DataOutputStream out = new DataOutputStream(client.getOutputStream())) {
            while (true) {
                byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                int correlationId = ((frame[0] & 0xff) << 24) | ((frame[1] & 0xff) << 16) | ((frame[2] & 0xff) << 8)
                        | (frame[3] & 0xff);
                Action action = dropByCorrelation.remove(correlationId);
                if (action == Action.DROP) {
                    dropped.incrementAndGet();
                    closeQuietly(client, broker);
                    return;
                }
                if (action == Action.DELAY) {
                    delayed.incrementAndGet();
                    CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(delayMs,
                            TimeUnit.MILLISECONDS)).join();
                }
                out.writeInt(frame.length);
                out.write(frame);
                out.flush();
            }
        } catch (IOException e) {
            closeQuietly(client, broker);
        }
    }

    private synchronized Action nextAction() {
        double r = random.nextDouble();
        return r < dropShare ? Action.DROP : r < dropShare + delayShare ? Action.DELAY : null;
    }

    private static void closeQuietly(Socket... sockets) {
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // already closed by the other pump
            }
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        threads.shutdownNow();
    }
}
