package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;

/** Saves at once outside a batch, once per changed partition inside one, and before the batch is left. */
@Timeout(10)
class StateSavesTest {

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final List<SharePartition> saved = new ArrayList<>();
    private SharePartition failing;
    private final ShareStateStore store = new ShareStateStore() {
        @Override
        public Optional<SharePartitionSnapshot> load(SharePartitionKey key) {
            return Optional.empty();
        }

        @Override
        public void save(SharePartition partition) {
            if (partition == failing) {
                throw new IllegalStateException("state topic unavailable");
            }
            saved.add(partition);
        }
    };
    private final StateSaves saves = new StateSaves(store);

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    private SharePartition partition(int index) {
        return new SharePartition(new SharePartitionKey("g", Uuid.randomUuid(), new TopicPartition("queue", index)),
                new InMemoryShareLog(), ShareGroupConfig.defaults(), timer, clock, SharePartitionListener.NONE, 0);
    }

    @Test
    void shouldSaveAtOnceWithoutABatch() {
        SharePartition p = partition(0);

        saves.changed(p);
        saves.changed(p);

        assertThat(saved).containsExactly(p, p);
    }

    @Test
    void shouldSaveEachPartitionChangedInABatchOnceWhenItCloses() {
        SharePartition a = partition(0);
        SharePartition b = partition(1);

        try (StateSaves.Batch batch = saves.open()) {
            saves.changed(a); // the acknowledgements
            saves.changed(b);
            saves.changed(a); // the acquisition
            assertThat(saved).as("nothing saved before the batch ends").isEmpty();
        }

        assertThat(saved).containsExactly(a, b);
        saves.changed(a);
        assertThat(saved).as("after the batch, saves go at once again").containsExactly(a, b, a);
    }

    @Test
    void shouldSaveOnFlushAndKeepTheBatchOpen() {
        SharePartition a = partition(0);

        try (StateSaves.Batch batch = saves.open()) {
            saves.changed(a);
            batch.flush(); // before a fetch parks
            assertThat(saved).containsExactly(a);
            saves.changed(a);
            assertThat(saved).containsExactly(a);
        }

        assertThat(saved).containsExactly(a, a);
    }

    @Test
    void shouldLeaveTheSavingToTheOutermostBatch() {
        SharePartition a = partition(0);

        try (StateSaves.Batch outer = saves.open()) {
            try (StateSaves.Batch inner = saves.open()) {
                saves.changed(a);
                inner.flush();
            }
            assertThat(saved).isEmpty();
        }

        assertThat(saved).containsExactly(a);
    }

    @Test
    void shouldSaveTheOtherPartitionsWhenOneSaveFailsAndReportTheFailure() {
        SharePartition a = partition(0);
        SharePartition b = partition(1);
        failing = a;

        assertThatThrownBy(() -> {
            try (StateSaves.Batch batch = saves.open()) {
                saves.changed(a);
                saves.changed(b);
            }
        }).isInstanceOf(IllegalStateException.class).hasMessage("state topic unavailable");

        assertThat(saved).containsExactly(b);
        failing = null;
        saves.changed(a);
        assertThat(saved).as("the failed batch is closed").containsExactly(b, a);
    }
}
