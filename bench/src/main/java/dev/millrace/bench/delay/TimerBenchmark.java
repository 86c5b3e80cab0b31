package dev.millrace.bench.delay;

import java.util.SplittableRandom;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.millrace.delay.SystemTimer;
import dev.millrace.delay.Time;
import dev.millrace.delay.TimerReaper;
import dev.millrace.delay.TimerTask;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * Schedule + cancel + expire with {@value #PENDING} timers pending, on Millrace's timing wheel
 * ({@link SystemTimer} driven by a {@link TimerReaper}) beside {@link DelayQueue} and {@link
 * ScheduledThreadPoolExecutor} in the same run.
 *
 * <p>Setup schedules {@value #PENDING} long timers (delays uniform in 1 s .. 1 h). One op, the
 * same on all three, from the same seeded random sequence:
 * <ol>
 *   <li>schedule one short timer (delay uniform in 1 .. 10 ms), which will expire and run;</li>
 *   <li>cancel one of the long timers, picked at random as {@code cancels} says;</li>
 *   <li>schedule a new long timer in its place, so that about {@value #PENDING} stay pending.</li>
 * </ol>
 * Which long timer a cancel picks ({@code cancels}, both run):
 * <ul>
 *   <li>{@code any}: uniformly among all {@value #PENDING}, so nearly every cancel finds a timer untouched since
 *   setup, cold in every cache: the worst case for a scheduler's memory access. This is the pattern the target was
 *   first measured with.</li>
 *   <li>{@code recent}: uniformly among {@value #RECENT} of the slots, each refilled with a new long timer when its
 *   timer is cancelled, so a cancel hits a timer scheduled about {@value #RECENT} ops before (tens of milliseconds
 *   here) while the other timers, nearly a million, wait: how a broker's timeouts go, most cancelled soon after they
 *   start (a record lock by the acknowledgement, a long-poll by the record arriving, a session timeout by the next
 *   heartbeat) beside many that wait (delayed messages, idle sessions).</li>
 * </ul>
 * <p>With {@code any} the harness's own bookkeeping weighs on every side: each op stores the new timer at a random slot
 * of a million-entry array, a card of the old generation that G1's refinement threads then scan (a CPU profile of the
 * wheel's run showed them at over half of both cores); with {@code recent} those stores fall in {@value #RECENT}
 * slots.
 *
 * <p>Every schedule allocates its own timer object (task, queue element, future), as a broker's
 * timeouts do. Expiry runs beside the ops, as in a broker: each scheduler has one expiry thread
 * that runs the short timers as they come due (the wheel: a {@link TimerReaper} running tasks
 * inline; the queue: {@code take()} and run in a loop; the executor: its single core thread).
 * Every {@value #BACKLOG_CHECK_INTERVAL} ops the op waits while more than {@value #MAX_IN_FLIGHT}
 * short timers are scheduled and not yet run, so no scheduler can score by letting expiry fall
 * behind; each iteration ends by checking that the pending count is still about {@value #PENDING}.
 * One op therefore costs two schedules, one cancel and one expiry.
 *
 * <p>Cancel is each peer's own: {@code DelayQueue.remove(Object)}, a linear scan of the heap, and
 * {@code Future.cancel} with {@code setRemoveOnCancelPolicy(true)}, which removes the task from the
 * heap in O(log n); the wheel unlinks the task from its bucket in O(1). Threading: one benchmark
 * thread issues the ops; the scheduler under test is shared with its expiry thread.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgs = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@Threads(1)
public class TimerBenchmark {

    static final int PENDING = 1_000_000;
    /** The slots a {@code recent} cancel picks among. */
    static final int RECENT = 65_536;
    static final int MAX_IN_FLIGHT = 100_000;
    /** Ops between two looks at the expiry thread's counter (a power of two), so looking costs nothing. */
    static final int BACKLOG_CHECK_INTERVAL = 1024;
    private static final long SEED = 0x5eed_7135L;

    /** The pending timers and the op, for any scheduler. */
    @State(Scope.Benchmark)
    public abstract static class Scheduler {
        /** Which long timer a cancel picks: {@code any} of them, or one of the {@value #RECENT} recent slots. */
        @Param({"any", "recent"})
        public String cancels;
        final AtomicLong shortTimersRun = new AtomicLong();
        private int cancelRange;
        private long shortTimersScheduled;
        private SplittableRandom random;

        abstract void start();

        abstract void scheduleShort(long delayMs);

        abstract void scheduleLong(int slot, long delayMs);

        abstract void cancel(int slot);

        abstract long pending();

        abstract void stop() throws InterruptedException;

        @Setup(Level.Trial)
        public void fill() {
            cancelRange = switch (cancels) {
                case "any" -> PENDING;
                case "recent" -> RECENT;
                default -> throw new IllegalArgumentException("cancels must be any or recent, got " + cancels);
            };
            random = new SplittableRandom(SEED);
            start();
            for (int slot = 0; slot < PENDING; slot++) {
                scheduleLong(slot, longDelayMs());
            }
        }

        final void op() {
            if ((shortTimersScheduled & (BACKLOG_CHECK_INTERVAL - 1)) == 0) {
                while (shortTimersScheduled - shortTimersRun.get() > MAX_IN_FLIGHT) {
                    Thread.yield();
                }
            }
            scheduleShort(1 + random.nextInt(10));
            shortTimersScheduled++;
            int slot = random.nextInt(cancelRange);
            cancel(slot);
            scheduleLong(slot, longDelayMs());
        }

        private long longDelayMs() {
            return 1_000 + random.nextLong(3_599_000);
        }

        @TearDown(Level.Iteration)
        public void checkPending() {
            long pending = pending();
            if (pending < PENDING * 9L / 10 || pending > PENDING + 2L * MAX_IN_FLIGHT) {
                throw new IllegalStateException("Expected about " + PENDING + " pending timers in "
                        + getClass().getSimpleName() + ", found " + pending);
            }
        }

        @TearDown(Level.Trial)
        public void close() throws InterruptedException {
            stop();
        }
    }

    @State(Scope.Benchmark)
    public static class Wheel extends Scheduler {
        private final TimerTask[] tasks = new TimerTask[PENDING];
        private TimerReaper timer;

        @Override
        void start() {
            SystemTimer wheel = new SystemTimer(SystemTimer.DEFAULT_TICK_MS, SystemTimer.DEFAULT_WHEEL_SIZE,
                    Time.SYSTEM, Runnable::run);
            timer = TimerReaper.start("timer-reaper", wheel, TimerReaper.DEFAULT_REAP_INTERVAL_MS);
        }

        @Override
        void scheduleShort(long delayMs) {
            timer.add(new CountingTask(delayMs, shortTimersRun));
        }

        @Override
        void scheduleLong(int slot, long delayMs) {
            TimerTask task = new CountingTask(delayMs, null);
            tasks[slot] = task;
            timer.add(task);
        }

        @Override
        void cancel(int slot) {
            tasks[slot].cancel();
        }

        @Override
        long pending() {
            return timer.size();
        }

        @Override
        void stop() {
            timer.close();
        }
    }

    @State(Scope.Benchmark)
    public static class JdkDelayQueue extends Scheduler {
        private final DelayedRun[] items = new DelayedRun[PENDING];
        private final DelayQueue<DelayedRun> queue = new DelayQueue<>();
        private final Runnable countRun = shortTimersRun::incrementAndGet;
        private Thread expirer;

        @Override
        void start() {
            expirer = new Thread(() -> {
                try {
                    while (true) {
                        queue.take().action.run();
                    }
                } catch (InterruptedException e) {
                    // stop
                }
            }, "delay-queue-expirer");
            expirer.setDaemon(true);
            expirer.start();
        }

        @Override
        void scheduleShort(long delayMs) {
            queue.offer(new DelayedRun(delayMs, countRun));
        }

        @Override
        void scheduleLong(int slot, long delayMs) {
            DelayedRun item = new DelayedRun(delayMs, DelayedRun.NOTHING);
            items[slot] = item;
            queue.offer(item);
        }

        @Override
        void cancel(int slot) {
            queue.remove(items[slot]);
        }

        @Override
        long pending() {
            return queue.size();
        }

        @Override
        void stop() throws InterruptedException {
            expirer.interrupt();
            expirer.join();
        }
    }

    @State(Scope.Benchmark)
    public static class JdkScheduledExecutor extends Scheduler {
        private final ScheduledFuture<?>[] futures = new ScheduledFuture<?>[PENDING];
        private final Runnable countRun = shortTimersRun::incrementAndGet;
        private final Runnable nothing = () -> { };
        private ScheduledThreadPoolExecutor executor;

        @Override
        void start() {
            executor = new ScheduledThreadPoolExecutor(1);
            executor.setRemoveOnCancelPolicy(true);
        }

        @Override
        void scheduleShort(long delayMs) {
            executor.schedule(countRun, delayMs, TimeUnit.MILLISECONDS);
        }

        @Override
        void scheduleLong(int slot, long delayMs) {
            futures[slot] = executor.schedule(nothing, delayMs, TimeUnit.MILLISECONDS);
        }

        @Override
        void cancel(int slot) {
            futures[slot].cancel(false);
        }

        @Override
        long pending() {
            return executor.getQueue().size();
        }

        @Override
        void stop() throws InterruptedException {
            executor.shutdownNow();
            executor.awaitTermination(1, TimeUnit.MINUTES);
        }
    }

    @Benchmark
    public void timingWheel(Wheel wheel) {
        wheel.op();
    }

    @Benchmark
    public void delayQueue(JdkDelayQueue queue) {
        queue.op();
    }

    @Benchmark
    public void scheduledThreadPoolExecutor(JdkScheduledExecutor executor) {
        executor.op();
    }

    /** A wheel task that counts its run, if given a counter. */
    static final class CountingTask extends TimerTask {
        private final AtomicLong runs;

        CountingTask(long delayMs, AtomicLong runs) {
            super(delayMs);
            this.runs = runs;
        }

        @Override
        public void run() {
            if (runs != null) {
                runs.incrementAndGet();
            }
        }
    }

    /** A {@link DelayQueue} element: an action due at a {@link System#nanoTime()} deadline. */
    static final class DelayedRun implements Delayed {
        static final Runnable NOTHING = () -> { };

        final long deadlineNanos;
        final Runnable action;

        DelayedRun(long delayMs, Runnable action) {
            this.deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMs);
            this.action = action;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(deadlineNanos, ((DelayedRun) other).deadlineNanos);
        }
    }
}
