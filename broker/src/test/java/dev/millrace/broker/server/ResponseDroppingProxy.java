package dev.millrace.broker.server;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.protocol.ApiKeys;

/**
 * A TCP proxy on loopback between Kafka clients and a broker that loses responses: it forwards every
 * request, and for a seeded random share of Produce requests it closes the client's connection
 * instead of forwarding the broker's answer, as a network failure after the broker wrote the data
 * would. The producer then retries a batch that is already in the log.
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
    private final AtomicInteger dropped = new AtomicInteger();
    private volatile int targetPort;

    ResponseDroppingProxy(long seed, double dropShare) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.random = new Random(seed);
        this.dropShare = dropShare;
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
                Map<Integer, Boolean> dropByCorrelation = new ConcurrentHashMap<>();
                threads.execute(() -> pumpRequests(client, broker, dropByCorrelation));
                threads.execute(() -> pumpResponses(broker, client, dropByCorrelation));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void pumpRequests(Socket client, Socket broker, Map<Integer, Boolean> dropByCorrelation) {
        try (DataInputStream in = new DataInputStream(client.getInputStream());
             DataOutputStream out = new DataOutputStream(broker.getOutputStream())) {
            while (true) {
                byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                short apiKey = (short) (((frame[0] & 0xff) << 8) | (frame[1] & 0xff));
                int correlationId = ((frame[4] & 0xff) << 24) | ((frame[5] & 0xff) << 16) | ((frame[6] & 0xff) << 8)
                        | (frame[7] & 0xff);
                if (apiKey == ApiKeys.PRODUCE.id && nextDrop()) {
                    dropByCorrelation.put(correlationId, true);
                }
                out.writeInt(frame.length);
                out.write(frame);
                out.flush();
            }
        } catch (IOException e) {
            closeQuietly(client, broker);
        }
    }

    private void pumpResponses(Socket broker, Socket client, Map<Integer, Boolean> dropByCorrelation) {
        try (DataInputStream in = new DataInputStream(broker.getInputStream());
             DataOutputStream out = new DataOutputStream(client.getOutputStream())) {
            while (true) {
                byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                int correlationId = ((frame[0] & 0xff) << 24) | ((frame[1] & 0xff) << 16) | ((frame[2] & 0xff) << 8)
                        | (frame[3] & 0xff);
                if (dropByCorrelation.remove(correlationId) != null) {
                    dropped.incrementAndGet();
                    closeQuietly(client, broker);
                    return;
                }
                out.writeInt(frame.length);
                out.write(frame);
                out.flush();
            }
        } catch (IOException e) {
            closeQuietly(client, broker);
        }
    }

    private synchronized boolean nextDrop() {
        return random.nextDouble() < dropShare;
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
