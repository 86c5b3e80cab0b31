package dev.millrace.delay;

import java.util.concurrent.DelayQueue;

/**
 * One level of a hierarchical timing wheel: {@code wheelSize} buckets of {@code tickMs} each, so
 * that the wheel spans {@code intervalMs = tickMs * wheelSize} from its current time. A task due
 * beyond that span goes to the overflow wheel, created on first need, whose tick is this wheel's
 * whole span. When a bucket of an upper wheel comes due, its tasks are added again and fall into
 * finer wheels (or run), so a task is moved at most once per level over its life.
 *
 * <pre>
 *   tick 1 ms, wheel size 20; each level above 0 is created the first time a task needs it
 *
 *   level 2   tick 400 ms   span 8 s      [ 0 | 1 | 2 | ... | 19 ]   one slot = all of level 1
 *   level 1   tick  20 ms   span 400 ms   [ 0 | 1 | 2 | ... | 19 ]   one slot = all of level 0
 *   level 0   tick   1 ms   span 20 ms    [ 0 | 1 | 2 | ... | 19 ]
 *                                                   │  slot = (dueMs / tickMs) % wheelSize
 *                                                   ▼
 *                         ┌─▶ root ⇄ task ⇄ task ⇄ ... ─┐   a TimerTaskList; while it holds
 *                         └─────────────────────────────┘   tasks it waits in the timer's
 *                                                           DelayQueue, keyed by its tick
 *
 *   levels needed for a delay D: the smallest L with tickMs * wheelSize^(L+1) > D;
 *   30 days at 1 ms x 20 takes levels 0..7 (level 7 spans 296 days)
 * </pre>
 *
 * <p>Invariants: {@code currentTimeMs} is a multiple of {@code tickMs}, never decreases, and is
 * never ahead of the level below; a wheel holds a task due at {@code e} only when {@code
 * currentTimeMs + tickMs <= e < currentTimeMs + intervalMs}, so its bucket is one of the {@code
 * wheelSize - 1} ticks after the current one and two ticks never share a slot: a bucket is reused for
 * a later tick only after it came due and was flushed. Nothing ticks while idle: the clock moves only
 * to the expiration of a bucket that the delay queue hands out. Spans saturate at {@code
 * Long.MAX_VALUE}, so the top level always accepts and the wheel count stays bounded.
 *
 * <p>Threading: guarded by {@link SystemTimer}'s read/write lock. {@link #add} runs under the read
 * lock, from many threads at once (callers of {@code Timer.add}, and the thread re-adding the tasks
 * of a flushed bucket): buckets synchronize themselves and the overflow wheel is created once, under
 * this wheel's monitor. {@link #advanceClock} runs under the write lock, alone; {@code
 * currentTimeMs} is therefore a plain field.
 */
final class TimingWheel {

    private final long tickMs;
    private final int wheelSize;
    private final long intervalMs;
    private final TimerTaskList[] buckets;
    private final DelayQueue<TimerTaskList> queue;
    private final Time time;
    private long currentTimeMs;
    private volatile TimingWheel overflowWheel;

    TimingWheel(long tickMs, int wheelSize, long startMs, DelayQueue<TimerTaskList> queue, Time time) {
        this.tickMs = tickMs;
        this.wheelSize = wheelSize;
        this.intervalMs = saturatedMultiply(tickMs, wheelSize);
        this.queue = queue;
        this.time = time;
        this.currentTimeMs = startMs - Math.floorMod(startMs, tickMs);
        this.buckets = new TimerTaskList[wheelSize];
        for (int i = 0; i < wheelSize; i++) {
            buckets[i] = new TimerTaskList(time);
        }
    }

    /**
     * Links the task into the bucket of this wheel, or of an overflow wheel, that covers {@code
     * dueMs}, and queues that bucket if it was not queued yet. The caller reads the task's
     * expiration once and passes it here: another thread may re-add the task meanwhile, and a bucket
     * chosen from one due time but stamped with another would stand for a tick outside its slot.
     *
     * @return false if {@code dueMs} is already due (the task was not linked anywhere); true once it is linked
     */
    boolean add(TimerTask task, long dueMs) {
        long aheadMs = dueMs - currentTimeMs;
        if (aheadMs < tickMs) {
            return false;
        }
        if (aheadMs >= intervalMs) {
            return overflowWheel().add(task, dueMs);
        }
        long virtualId = Math.floorDiv(dueMs, tickMs);
        TimerTaskList bucket = buckets[(int) Math.floorMod(virtualId, (long) wheelSize)];
        while (!bucket.add(task)) {
            // the same task was linked elsewhere by a concurrent add; the later add wins
            TimerTaskList other = task.list();
            if (other != null) {
                other.remove(task, false);
            }
        }
        if (bucket.setExpiration(virtualId * tickMs)) {
            queue.offer(bucket);
        }
        return true;
    }

    /** Moves this wheel, and the wheels above it, to the tick that contains {@code timeMs}. */
    void advanceClock(long timeMs) {
        if (timeMs - currentTimeMs >= tickMs) {
            currentTimeMs = timeMs - Math.floorMod(timeMs, tickMs);
            TimingWheel overflow = overflowWheel;
            if (overflow != null) {
                overflow.advanceClock(currentTimeMs);
            }
        }
    }

    long tickMs() {
        return tickMs;
    }

    long currentTimeMs() {
        return currentTimeMs;
    }

    /** The number of tasks linked into this wheel and the wheels above it: O(wheelSize * levels). */
    long size() {
        long size = 0;
        for (TimerTaskList bucket : buckets) {
            size += bucket.size();
        }
        TimingWheel overflow = overflowWheel;
        return overflow == null ? size : size + overflow.size();
    }

    /** For tests: the number of levels from this one up, overflow wheels created so far included. */
    int levels() {
        TimingWheel overflow = overflowWheel;
        return overflow == null ? 1 : 1 + overflow.levels();
    }

    private TimingWheel overflowWheel() {
        TimingWheel overflow = overflowWheel;
        if (overflow == null) {
            synchronized (this) {
                overflow = overflowWheel;
                if (overflow == null) {
                    overflow = new TimingWheel(intervalMs, wheelSize, currentTimeMs, queue, time);
                    overflowWheel = overflow;
                }
            }
        }
        return overflow;
    }

    private static long saturatedMultiply(long a, long b) {
        long high = Math.multiplyHigh(a, b);
        long low = a * b;
        return (high == 0 && low >= 0) ? low : Long.MAX_VALUE;
    }
}
