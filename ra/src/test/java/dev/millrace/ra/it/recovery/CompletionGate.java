package dev.millrace.ra.it.recovery;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A TCP relay on loopback between an application server and the test broker, which reads the Kafka request frames
 * on their way to the broker so a test can stop the server between the two phases of a commit. The broker
 * advertises the relay's port, so every connection the server's clients make (bootstrap, partition leaders,
 * coordinators) passes through it.
 *
 * <p>A request frame, as the Kafka protocol lays it out (big-endian):
 * <pre>
 *   +-----------------+----------------+--------------------+-------------------+-----
 *   | size (int32)    | api_key (int16)| api_version (int16)| correlation (int32)| ...  size bytes after the size
 *   +-----------------+----------------+--------------------+-------------------+-----
 * </pre>
 * While {@linkplain #arm() armed}, a frame that completes a transaction, {@code EndTxn} (api key
 * {@value #END_TXN}) or Millrace's {@code XaComplete} ({@value #XA_COMPLETE}), is not forwarded: the connection it
 * came on forwards nothing more (its sender waits for an answer that never comes) until either side closes it, and
 * {@link #awaitHeld} returns. Responses pass through untouched.
 *
 * <p>Thread-safe; two daemon threads per relayed connection. Closing it closes every connection.
 */
final class CompletionGate implements AutoCloseable {

    static final short END_TXN = 26;
    static final short XA_COMPLETE = 30021;

    private final ServerSocket listener;
    private final int brokerPort;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final CountDownLatch held = new CountDownLatch(1);
    private final AtomicReference<String> heldRequest = new AtomicReference<>();
    private volatile boolean armed;

    private CompletionGate(ServerSocket listener, int brokerPort) {
        this.listener = listener;
        this.brokerPort = brokerPort;
    }

    /** A gate listening on 127.0.0.1:{@code port}, relaying to the broker at 127.0.0.1:{@code brokerPort}. */
    static CompletionGate open(int port, int brokerPort) throws IOException {
        ServerSocket listener = new ServerSocket();
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        CompletionGate gate = new CompletionGate(listener, brokerPort);
        daemon("gate-accept", gate::acceptLoop).start();
        return gate;
    }

    /** From now on, hold the first transaction completion of each connection. */
    void arm() {
        armed = true;
    }

    /** Forward everything again (connections already holding a frame stay stopped). */
    void disarm() {
        armed = false;
    }

    /** Waits until a completion was held; its description ({@code api key/version}), or null on timeout. */
    String awaitHeld(long timeout, TimeUnit unit) throws InterruptedException {
        return held.await(timeout, unit) ? heldRequest.get() : null;
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket broker = new Socket(InetAddress.getLoopbackAddress(), brokerPort);
                sockets.add(client);
                sockets.add(broker);
                daemon("gate-requests", () -> requests(client, broker)).start();
                daemon("gate-responses", () -> copy(broker, client)).start();
            } catch (IOException e) {
                // closed, or the broker refused: the client sees its connection closed
            }
        }
    }

    private void requests(Socket client, Socket broker) {
        try (DataInputStream in = new DataInputStream(client.getInputStream());
                DataOutputStream out = new DataOutputStream(broker.getOutputStream())) {
            boolean holding = false;
            while (true) {
                int size = in.readInt();
                byte[] frame = in.readNBytes(size);
                if (frame.length < size) {
                    break;
                }
                short apiKey = (short) (((frame[0] & 0xff) << 8) | (frame[1] & 0xff));
                if (!holding && armed && frame.length >= 4 && (apiKey == END_TXN || apiKey == XA_COMPLETE)) {
                    holding = true;
                    short version = (short) (((frame[2] & 0xff) << 8) | (frame[3] & 0xff));
                    heldRequest.compareAndSet(null, (apiKey == END_TXN ? "EndTxn" : "XaComplete") + " v" + version);
                    held.countDown();
                }
                if (!holding) {
                    out.writeInt(size);
                    out.write(frame);
                    out.flush();
                }
            }
        } catch (IOException closed) {
            // either side went away
        } finally {
            closeQuietly(client);
            closeQuietly(broker);
        }
    }

    private void copy(Socket from, Socket to) {
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException closed) {
            // either side went away
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private void closeQuietly(Socket socket) {
        sockets.remove(socket);
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    private static Thread daemon(String name, Runnable task) {
        Thread t = new Thread(task, name);
        t.setDaemon(true);
        return t;
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Socket s : Set.copyOf(sockets)) {
            closeQuietly(s);
        }
    }
}
