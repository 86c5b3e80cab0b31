package dev.millrace.broker.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for test brokers to listen on, reserved across every test JVM on this machine until the reserving JVM exits.
 *
 * <p>A port is chosen at random in {@code [15000, 32000)}, below the kernel's ephemeral range (32768 and up here),
 * where outgoing connections take their local ports and could take it between the choice and the bind. Being
 * bindable now is not enough: the build runs two test JVMs at once, and a crash test that kills a node and restarts
 * it on the same port leaves that port free for seconds, long enough for the other JVM to choose it too (a CI run
 * failed that way: a stopped cluster's port answered again, bound by the other JVM's restarted node). So each port is
 * also claimed with an exclusive lock on a file named after it:
 *
 * <pre>
 *   ${java.io.tmpdir}/millrace-test-ports/
 *       15123.lock   locked by the JVM that handed out 15123 (held until that JVM exits, also when it is killed)
 *       27493.lock   ...
 * </pre>
 *
 * <p>The kernel drops the lock when its JVM goes, so nothing has to clean up; a file left behind unlocked is free to
 * claim again. A port is handed out once per JVM: tests that restart a node on its port keep it through the restart.
 */
public final class TestPorts {

    private static final int LOW = 15_000;
    private static final int HIGH = 32_000;
    private static final Path DIRECTORY = Path.of(System.getProperty("java.io.tmpdir"), "millrace-test-ports");
    private static final List<FileLock> HELD = new CopyOnWriteArrayList<>();

    private TestPorts() {
    }

    /** A port on 127.0.0.1 that is free now and that no other test JVM here holds or will be handed. */
    public static int reserve() {
        for (int attempt = 0; attempt < 10_000; attempt++) {
            int port = LOW + ThreadLocalRandom.current().nextInt(HIGH - LOW);
            if (tryReserve(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free test port in [" + LOW + ", " + HIGH + ") after 10000 tries");
    }

    /**
     * A base port P such that P + i * stride + j is reserved for every i below {@code groups} and j below
     * {@code width} (a cluster's nodes with a few ports each); on a partial success the ports already reserved stay
     * reserved (and unused) rather than being handed to another JVM half-checked.
     */
    public static int reserveBlock(int groups, int stride, int width) {
        int span = (groups - 1) * stride + width;
        for (int attempt = 0; attempt < 10_000; attempt++) {
            int base = LOW + ThreadLocalRandom.current().nextInt(HIGH - LOW - span);
            if (reservesAll(base, groups, stride, width)) {
                return base;
            }
        }
        throw new IllegalStateException("no free block of " + groups + " x " + width + " test ports after 10000 tries");
    }

    private static boolean reservesAll(int base, int groups, int stride, int width) {
        for (int i = 0; i < groups; i++) {
            for (int j = 0; j < width; j++) {
                if (!tryReserve(base + i * stride + j)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Claims {@code port} if no test JVM holds it and it is bindable on 127.0.0.1 now. */
    static synchronized boolean tryReserve(int port) {
        FileLock lock = lockFile(port);
        if (lock == null) {
            return false;
        }
        if (!bindable(port)) {
            release(lock);
            return false;
        }
        HELD.add(lock);
        return true;
    }

    private static FileLock lockFile(int port) {
        try {
            Files.createDirectories(DIRECTORY);
            FileChannel channel = FileChannel.open(DIRECTORY.resolve(port + ".lock"),
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            try {
                FileLock lock = channel.tryLock();
                if (lock == null) {
                    channel.close();
                }
                return lock;
            } catch (OverlappingFileLockException heldHere) {
                channel.close();
                return null;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot lock a test port file in " + DIRECTORY, e);
        }
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress("127.0.0.1", port));
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    private static void release(FileLock lock) {
        try {
            lock.channel().close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
