package dev.millrace.bench.jms;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import javax.transaction.xa.XAResource;

import org.HdrHistogram.Histogram;
import org.h2.jdbcx.JdbcDataSource;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.XAConnection;
import jakarta.jms.XAConnectionFactory;
import jakarta.jms.XASession;
import jakarta.transaction.Transaction;
import jakarta.transaction.TransactionManager;

/**
 * The workload of the XA comparison against one broker: global transactions that each consume one message from queue
 * {@code <prefix>.in}, send one persistent message to {@code <prefix>.out} and insert one row into an H2 table, all
 * enlisted in one transaction of the given transaction manager and committed with two-phase commit (the broker and
 * H2 are two resource managers, so the manager logs its decision between prepare and commit).
 *
 * <p>Each thread has its own XA connection, XA session, consumer, producer and H2 XA connection, opened before the
 * clock starts; a transaction is timed from {@code begin} to the return of {@code commit}. The input queue is filled
 * beforehand with a plain (non-XA) producer, so the measured part only consumes what is there.
 *
 * <p>Not thread-safe: one run at a time, from the comparison's main thread.
 */
final class XaTransfers {

    /** What one measured run produced: transactions, wall time and the latency of one transaction. */
    record Result(int threads, long transactions, long elapsedNanos, Histogram latency) {

        double perSecond() {
            return transactions * 1e9 / elapsedNanos;
        }
    }

    private final ConnectionFactory plain;
    private final XAConnectionFactory xa;
    private final TransactionManager tm;
    private final JdbcDataSource database;
    private final String prefix;
    private final int bodyBytes;
    /** Runs so far: each run's row ids carry its number. */
    private final java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicReference<Exception> firstFailure =
            new java.util.concurrent.atomic.AtomicReference<>();

    XaTransfers(ConnectionFactory plain, XAConnectionFactory xa, TransactionManager tm, JdbcDataSource database,
                String prefix, int bodyBytes) throws Exception {
        this.plain = plain;
        this.xa = xa;
        this.tm = tm;
        this.database = database;
        this.prefix = prefix;
        this.bodyBytes = bodyBytes;
        try (java.sql.Connection c = database.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS transfers (id VARCHAR(64) PRIMARY KEY, body VARCHAR(8192))");
        }
    }

    /** Sends {@code count} persistent messages to the input queue (not timed). */
    void fill(int count) throws Exception {
        String body = "x".repeat(bodyBytes);
        try (Connection c = plain.createConnection()) {
            Session s = c.createSession(true, Session.SESSION_TRANSACTED);
            MessageProducer p = s.createProducer(s.createQueue(prefix + ".in"));
            p.setDeliveryMode(DeliveryMode.PERSISTENT);
            for (int i = 0; i < count; i++) {
                p.send(s.createTextMessage(body));
                if (i % 500 == 499) {
                    s.commit();
                }
            }
            s.commit();
        }
    }

    /**
     * Runs {@code warmupPerThread} unmeasured and then {@code perThread} measured transactions on each of
     * {@code threads} threads; every thread's transactions start together after all have warmed up.
     */
    Result run(int threads, int warmupPerThread, int perThread, Consumer<String> log) throws Exception {
        firstFailure.set(null);
        int runNumber = runs.incrementAndGet(); // row ids stay unique across runs (warm-up rounds, thread counts)
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        java.util.concurrent.CyclicBarrier barrier = new java.util.concurrent.CyclicBarrier(threads + 1);
        List<Future<Histogram>> futures = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                String worker = prefix + "-r" + runNumber + "-" + threads + "t-" + t;
                futures.add(pool.submit(() -> worker(worker, warmupPerThread, perThread, barrier)));
            }
            long start;
            long elapsed;
            try {
                barrier.await(10, TimeUnit.MINUTES);
                start = System.nanoTime();
                barrier.await(60, TimeUnit.MINUTES);
                elapsed = System.nanoTime() - start;
            } catch (java.util.concurrent.BrokenBarrierException e) {
                Exception first = firstFailure.get();
                throw first == null ? e : new IllegalStateException("a worker failed: " + first, first);
            }
            Histogram all = new Histogram(3);
            for (Future<Histogram> f : futures) {
                all.add(f.get());
            }
            Result r = new Result(threads, (long) threads * perThread, elapsed, all);
            log.accept(String.format(java.util.Locale.ROOT,
                    "%d thread(s): %,d transactions in %.1f s = %,.0f tx/s, p50 %.2f ms, p99 %.2f ms, max %.1f ms"
                            + " (ended %s)",
                    threads, r.transactions(), elapsed / 1e9, r.perSecond(),
                    all.getValueAtPercentile(50) / 1e6, all.getValueAtPercentile(99) / 1e6, all.getMaxValue() / 1e6,
                    java.time.LocalTime.now()));
            return r;
        } finally {
            pool.shutdownNow();
        }
    }

    /** Rows in the table (a check after the runs: every committed transaction wrote exactly one). */
    long rows() throws Exception {
        try (java.sql.Connection c = database.getConnection(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT COUNT(*) FROM transfers")) {
            r.next();
            return r.getLong(1);
        }
    }

    /** Messages waiting on the output queue, drained with a plain consumer (a check after the runs). */
    long drainOutput() throws Exception {
        long n = 0;
        try (Connection c = plain.createConnection()) {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = s.createConsumer(s.createQueue(prefix + ".out"));
            c.start();
            while (consumer.receive(n == 0 ? 10_000 : 2_000) != null) {
                n++;
            }
        }
        return n;
    }

    private Histogram worker(String name, int warmup, int measured, java.util.concurrent.CyclicBarrier barrier)
            throws Exception {
        Histogram latency = new Histogram(3);
        XAConnection jms = xa.createXAConnection();
        javax.sql.XAConnection db = database.getXAConnection();
        try {
            XASession xs = jms.createXASession();
            Queue in = xs.createQueue(prefix + ".in");
            Queue out = xs.createQueue(prefix + ".out");
            MessageConsumer consumer = xs.createConsumer(in);
            MessageProducer producer = xs.createProducer(out);
            producer.setDeliveryMode(DeliveryMode.PERSISTENT);
            jms.start();
            // the JDBC handle before the first enlistment (H2 resets auto-commit when a handle is opened)
            java.sql.Connection jdbc = db.getConnection();
            PreparedStatement insert = jdbc.prepareStatement("INSERT INTO transfers VALUES (?, ?)");
            for (int i = 0; i < warmup; i++) {
                transfer(xs, consumer, producer, db.getXAResource(), insert, name + "-w" + i);
            }
            barrier.await(10, TimeUnit.MINUTES);
            for (int i = 0; i < measured; i++) {
                long t0 = System.nanoTime();
                transfer(xs, consumer, producer, db.getXAResource(), insert, name + "-m" + i);
                long took = System.nanoTime() - t0;
                latency.recordValue(took);
                if (took > 1_000_000_000L) {
                    System.out.printf("  slow: %s-m%d took %,d ms (ended %s)%n", name, i, took / 1_000_000,
                            java.time.LocalTime.now());
                }
            }
            // messages this consumer fetched ahead go back to the queue now, not when the last thread is done:
            // the input holds exactly what the threads need, so another thread may be waiting for them
            consumer.close();
            barrier.await(60, TimeUnit.MINUTES);
            return latency;
        } catch (Exception e) {
            firstFailure.compareAndSet(null, e);
            barrier.reset(); // the main thread and the other workers stop waiting at once
            throw e;
        } finally {
            db.close();
            jms.close();
        }
    }

    private void transfer(XASession xs, MessageConsumer consumer, MessageProducer producer, XAResource db,
                          PreparedStatement insert, String id) throws Exception {
        tm.begin();
        Transaction tx = tm.getTransaction();
        XAResource jms = xs.getXAResource();
        tx.enlistResource(jms);
        tx.enlistResource(db);
        Message m = consumer.receive(30_000);
        if (m == null) {
            tm.rollback();
            throw new IllegalStateException(id + ": no message on " + prefix + ".in within 30 s");
        }
        producer.send(xs.createTextMessage(id));
        insert.setString(1, id);
        insert.setString(2, m.getBody(String.class));
        insert.executeUpdate();
        tx.delistResource(jms, XAResource.TMSUCCESS);
        tx.delistResource(db, XAResource.TMSUCCESS);
        tm.commit();
    }
}
