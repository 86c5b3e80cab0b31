package dev.millrace.bench.jms;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSException;
import jakarta.jms.Queue;
import jakarta.jms.Session;

/**
 * What a JMS client costs the application's JVM: {@code connections} connections made one after the other from one
 * {@link ConnectionFactory}, each started, with one AUTO_ACKNOWLEDGE session, one consumer and one producer on the
 * same queue. Measured in this JVM: live threads ({@code ThreadMXBean.getThreadCount}) and heap used after
 * {@code System.gc()} before the first connection and {@link #SETTLE_MS} after the last is set up, and the wall time
 * of the setup. Meant to run in a JVM of its own ({@link JmsClientMain}), so that nothing else in it adds threads or
 * heap, and every pool the client library creates on first use counts.
 *
 * <p>Not thread-safe: one measurement at a time.
 */
final class ClientFootprint {

    /** Time left after the setup for threads that start lazily, before the second measurement. */
    static final long SETTLE_MS = 2_000;

    /** Threads and heap before and after, and the setup's wall time. */
    record Figures(int connections, int threadsBefore, int threadsAfter, long heapBeforeBytes, long heapAfterBytes,
                   double setupMs) {

        double threadsAddedPerConnection() {
            return (threadsAfter - threadsBefore) / (double) connections;
        }

        double heapAddedMiB() {
            return (heapAfterBytes - heapBeforeBytes) / (1024.0 * 1024.0);
        }
    }

    private ClientFootprint() {
    }

    static Figures measure(ConnectionFactory factory, int connections, String queue)
            throws JMSException, InterruptedException {
        if (connections <= 0) {
            throw new IllegalArgumentException("connections must be positive, not " + connections);
        }
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        long heapBefore = heapAfterGc();
        List<Connection> open = new ArrayList<>(connections);
        try {
            long start = System.nanoTime();
            for (int i = 0; i < connections; i++) {
                Connection connection = factory.createConnection();
                open.add(connection);
                Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
                Queue destination = session.createQueue(queue);
                session.createConsumer(destination);
                session.createProducer(destination);
                connection.start();
            }
            double setupMs = (System.nanoTime() - start) / 1e6;
            Thread.sleep(SETTLE_MS);
            int threadsAfter = ManagementFactory.getThreadMXBean().getThreadCount();
            long heapAfter = heapAfterGc();
            return new Figures(connections, threadsBefore, threadsAfter, heapBefore, heapAfter, setupMs);
        } finally {
            closeAll(open);
        }
    }

    /** Heap used after two full collections. */
    private static long heapAfterGc() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 2; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return memory.getHeapMemoryUsage().getUsed();
    }

    /** Closes the connections, 16 at a time, for at most a minute (a queue consumer's close may wait for a fetch). */
    private static void closeAll(List<Connection> open) throws InterruptedException {
        ExecutorService closer = Executors.newFixedThreadPool(16);
        for (Connection connection : open) {
            closer.execute(() -> {
                try {
                    connection.close();
                } catch (JMSException | RuntimeException e) {
                    System.out.println("close failed: " + e);
                }
            });
        }
        closer.shutdown();
        if (!closer.awaitTermination(60, TimeUnit.SECONDS)) {
            System.out.println("connections still closing after 60 s; leaving them to the JVM's exit");
        }
    }
}
