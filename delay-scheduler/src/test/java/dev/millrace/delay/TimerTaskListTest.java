package dev.millrace.delay;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class TimerTaskListTest {

    private final MockTime time = new MockTime();
    private final TimerTaskList bucket = new TimerTaskList(time);
    private final List<String> log = new ArrayList<>();

    @Test
    void shouldLinkAndUnlinkAnyTaskAndKeepTheCount() {
        List<RecordingTask> tasks = armedTasks(5);
        tasks.forEach(bucket::add);
        assertThat(bucket.size()).isEqualTo(5);

        bucket.remove(tasks.get(2), false);
        bucket.remove(tasks.get(0), false);
        bucket.remove(tasks.get(4), false);
        bucket.remove(tasks.get(4), false);
        assertThat(bucket.size()).isEqualTo(2);
        assertThat(tasks.get(2).list()).isNull();

        assertThat(flushNames()).containsExactly("t1", "t3");
        assertThat(bucket.isEmpty()).isTrue();
        assertThat(bucket.size()).isZero();
    }

    @Test
    void shouldFlushInAddOrderAndLeaveTasksInNoBucket() {
        List<RecordingTask> tasks = armedTasks(3);
        tasks.forEach(bucket::add);
        bucket.setExpiration(100);

        List<TimerTask> flushed = new ArrayList<>();
        bucket.flush(flushed::add);

        assertThat(flushed).containsExactlyElementsOf(tasks);
        assertThat(flushed).allSatisfy(task -> {
            assertThat(task.list()).isNull();
            assertThat(task.next).isNull();
            assertThat(task.prev).isNull();
        });
        assertThat(bucket.expirationMs()).isEqualTo(TimerTaskList.NOT_SCHEDULED);
        assertThat(bucket.isEmpty()).isTrue();
    }

    /**
     * A flush runs beside adds, so a task it has detached may be re-added (linked into another
     * bucket) while the flush is still handing out the tasks after it. The flush must still hand out
     * every detached task, and must not touch the links of the bucket the re-added task joined.
     */
    @Test
    void shouldHandOutEveryTaskEvenIfOneIsReAddedElsewhereDuringTheFlush() {
        List<RecordingTask> tasks = armedTasks(3);
        tasks.forEach(bucket::add);
        TimerTaskList other = new TimerTaskList(time);
        RecordingTask reAdded = tasks.get(1);

        List<TimerTask> flushed = new ArrayList<>();
        bucket.flush(task -> {
            flushed.add(task);
            if (task == tasks.get(0)) {
                reAdded.arm(time.hiResClockMs() + 50);
                assertThat(other.add(reAdded)).isTrue();
            }
        });

        assertThat(flushed).containsExactlyElementsOf(tasks);
        assertThat(other.size()).isEqualTo(1);
        List<TimerTask> fromOther = new ArrayList<>();
        other.flush(fromOther::add);
        assertThat(fromOther).containsExactly(reAdded);
    }

    @Test
    void shouldRefuseATaskLinkedIntoAnotherBucket() {
        TimerTaskList other = new TimerTaskList(time);
        RecordingTask task = armedTasks(1).get(0);
        assertThat(other.add(task)).isTrue();
        assertThat(bucket.add(task)).isFalse();
        assertThat(task.list()).isSameAs(other);
        bucket.remove(task, false);
        assertThat(task.list()).as("removing from a bucket it is not in").isSameAs(other);
    }

    @Test
    void shouldUnlinkOnCancelOnlyWhileStillCancelled() {
        RecordingTask task = armedTasks(1).get(0);
        bucket.add(task);
        bucket.remove(task, true);
        assertThat(task.list()).as("not cancelled: stays").isSameAs(bucket);

        assertThat(task.cancel()).isTrue();
        assertThat(task.list()).isNull();
        assertThat(bucket.size()).isZero();
    }

    @Test
    void shouldReportAChangeOfExpirationOnlyOnce() {
        assertThat(bucket.setExpiration(40)).isTrue();
        assertThat(bucket.setExpiration(40)).isFalse();
        assertThat(bucket.setExpiration(60)).isTrue();
        assertThat(bucket.expirationMs()).isEqualTo(60);
    }

    @Test
    void shouldBeDueWhenTheClockReachesItsExpiration() {
        long nowMs = time.hiResClockMs();
        bucket.setExpiration(nowMs + 30);
        assertThat(bucket.getDelay(TimeUnit.MILLISECONDS)).isEqualTo(30);
        time.advanceMs(30);
        assertThat(bucket.getDelay(TimeUnit.NANOSECONDS)).isZero();
        time.advanceMs(30);
        assertThat(bucket.getDelay(TimeUnit.MILLISECONDS)).isZero();
    }

    @Test
    void shouldOrderBucketsByExpiration() {
        TimerTaskList later = new TimerTaskList(time);
        bucket.setExpiration(10);
        later.setExpiration(20);
        assertThat(bucket.compareTo(later)).isNegative();
        assertThat(later.compareTo(bucket)).isPositive();
    }

    private List<RecordingTask> armedTasks(int count) {
        List<RecordingTask> tasks = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            RecordingTask task = new RecordingTask("t" + i, 10, time, log);
            task.arm(time.hiResClockMs() + 10);
            tasks.add(task);
        }
        return tasks;
    }

    private List<String> flushNames() {
        List<String> names = new ArrayList<>();
        bucket.flush(task -> names.add(((RecordingTask) task).name));
        return names;
    }
}
