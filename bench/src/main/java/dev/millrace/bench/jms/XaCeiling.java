package dev.millrace.bench.jms;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.HdrHistogram.Histogram;
import org.h2.jdbcx.JdbcDataSource;

import com.arjuna.ats.arjuna.common.arjPropertyManager;

import dev.millrace.bench.e2e.Cleanup;

import jakarta.transaction.Transaction;
import jakarta.transaction.TransactionManager;

/**
 * What the XA comparison's transactions cost without any broker: the same Narayana (standalone, object store on this
 * disk) and H2 (file-based) as {@link XaComparison}, each transaction inserting one row and enlisting, in place of the
 * broker's XAResource, one that does nothing and votes yes at prepare, so Narayana still logs its decision and commits
 * in two phases. The transactions per second it reaches at 1 and 4 threads are a ceiling for any broker in that
 * comparison on this machine: a broker's own work only adds to each transaction.
 *
 * <pre>
 *   java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -cp bench/target/millrace-bench.jar dev.millrace.bench.jms.XaCeiling
 *       [--threads 1,4] [--transactions N] [--warmup N]
 * </pre>
 */
public final class XaCeiling {

    private XaCeiling() {
    }

    public static void main(String[] args) throws Exception {
        List<Integer> threadCounts = List.of(1, 4);
        int transactions = 4_000;
        int warmup = 3_000;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--threads" -> threadCounts = java.util.Arrays.stream(args[++i].split(","))
                        .map(Integer::parseInt).toList();
                case "--transactions" -> transactions = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("unknown argument " + args[i]
                            + "; usage: XaCeiling [--threads 1,4] [--transactions N] [--warmup N]");
                    System.exit(2);
                }
            }
        }
        Path workDir = Files.createTempDirectory("millrace-xa-ceiling-");
        Cleanup cleanup = new Cleanup(workDir, false);
        Runtime.getRuntime().addShutdownHook(new Thread(cleanup, "xa-ceiling-cleanup"));
        arjPropertyManager.getObjectStoreEnvironmentBean().setObjectStoreDir(workDir.resolve("narayana").toString());
        arjPropertyManager.getCoreEnvironmentBean().setNodeIdentifier("millrace-xa-ceiling");
        TransactionManager tm = com.arjuna.ats.jta.TransactionManager.transactionManager();
        JdbcDataSource database = new JdbcDataSource();
        database.setURL("jdbc:h2:" + workDir.resolve("h2").resolve("bench") + ";DB_CLOSE_DELAY=-1");
        try (java.sql.Connection c = database.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE transfers (id VARCHAR(64) PRIMARY KEY, body VARCHAR(8192))");
        }
        System.out.println("XA ceiling: Narayana + H2 + a resource that does nothing, " + transactions
                + " measured transactions per thread count after " + warmup + " per thread, work directory "
                + workDir);
        int run = 0;
        for (int threads : threadCounts) {
            run++;
            measure(tm, database, threads, warmup / threads, 0, "w" + run);
            long[] result = measure(tm, database, threads, 0, transactions / threads, "m" + run);
            System.out.printf(java.util.Locale.ROOT, "%d thread(s): %,.0f tx/s, p50 %.2f ms, p99 %.2f ms%n",
                    threads, result[0] * 1e9 / result[1], result[2] / 1e6, result[3] / 1e6);
        }
        cleanup.run();
        System.exit(0);
    }

    /** Returns {transactions, elapsed ns, p50 ns, p99 ns} of {@code threads} threads' measured transactions. */
    private static long[] measure(TransactionManager tm, JdbcDataSource database, int threads, int warmup,
                                  int measured, String tag) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CyclicBarrier barrier = new CyclicBarrier(threads + 1);
        List<Future<Histogram>> futures = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                String name = tag + "-" + threads + "t-" + t;
                futures.add(pool.submit(() -> {
                    Histogram latency = new Histogram(3);
                    javax.sql.XAConnection db = database.getXAConnection();
                    try {
                        java.sql.Connection jdbc = db.getConnection();
                        PreparedStatement insert = jdbc.prepareStatement("INSERT INTO transfers VALUES (?, ?)");
                        for (int i = 0; i < warmup; i++) {
                            transfer(tm, db.getXAResource(), insert, name + "-w" + i);
                        }
                        barrier.await(10, TimeUnit.MINUTES);
                        for (int i = 0; i < measured; i++) {
                            long t0 = System.nanoTime();
                            transfer(tm, db.getXAResource(), insert, name + "-" + i);
                            latency.recordValue(System.nanoTime() - t0);
                        }
                        barrier.await(60, TimeUnit.MINUTES);
                        return latency;
                    } finally {
                        db.close();
                    }
                }));
            }
            barrier.await(10, TimeUnit.MINUTES);
            long start = System.nanoTime();
            barrier.await(60, TimeUnit.MINUTES);
            long elapsed = System.nanoTime() - start;
            Histogram all = new Histogram(3);
            for (Future<Histogram> f : futures) {
                all.add(f.get());
            }
            return new long[] {(long) threads * measured, elapsed, all.getValueAtPercentile(50),
                    all.getValueAtPercentile(99)};
        } finally {
            pool.shutdownNow();
        }
    }

    private static void transfer(TransactionManager tm, XAResource db, PreparedStatement insert, String id)
            throws Exception {
        tm.begin();
        Transaction tx = tm.getTransaction();
        NoopResource broker = new NoopResource();
        tx.enlistResource(broker);
        tx.enlistResource(db);
        insert.setString(1, id);
        insert.setString(2, "x".repeat(1024));
        insert.executeUpdate();
        tx.delistResource(broker, XAResource.TMSUCCESS);
        tx.delistResource(db, XAResource.TMSUCCESS);
        tm.commit();
    }

    /** A resource manager with no work: every branch prepares (votes yes) and commits at once. */
    private static final class NoopResource implements XAResource {

        @Override
        public void commit(Xid xid, boolean onePhase) {
        }

        @Override
        public void end(Xid xid, int flags) {
        }

        @Override
        public void forget(Xid xid) {
        }

        @Override
        public int getTransactionTimeout() {
            return 0;
        }

        @Override
        public boolean isSameRM(XAResource other) {
            return other == this;
        }

        @Override
        public int prepare(Xid xid) {
            return XA_OK;
        }

        @Override
        public Xid[] recover(int flag) throws XAException {
            return new Xid[0];
        }

        @Override
        public void rollback(Xid xid) {
        }

        @Override
        public boolean setTransactionTimeout(int seconds) {
            return false;
        }

        @Override
        public void start(Xid xid, int flags) {
        }
    }
}
