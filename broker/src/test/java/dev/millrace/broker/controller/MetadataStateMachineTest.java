package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import com.alipay.sofa.jraft.Status;
import com.alipay.sofa.jraft.error.RaftError;

import dev.millrace.broker.controller.MetadataRecord.ConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.PartitionRecord;
import dev.millrace.broker.controller.MetadataRecord.ProducerIdsRecord;
import dev.millrace.broker.controller.MetadataRecord.TopicRecord;

class MetadataStateMachineTest {

    private static final Uuid ID = Uuid.randomUuid();

    private final MetadataStateMachine stateMachine = new MetadataStateMachine("[test] ");

    private static byte[] batch(MetadataRecord... records) {
        return MetadataRecordSerde.encode(List.of(records));
    }

    @Test
    @Timeout(10)
    void shouldPublishEachEntryAndNotifyListenersInOrderWhenApplied() {
        List<MetadataImage> seen = new ArrayList<>();
        stateMachine.registerListener((previous, current) -> {
            assertThat(previous).isSameAs(seen.isEmpty() ? MetadataImage.EMPTY : seen.get(seen.size() - 1));
            seen.add(current);
        });
        List<Long> imageIndexWhenDone = new ArrayList<>();
        ScriptedIterator iter = new ScriptedIterator(10)
                .add(batch(new TopicRecord("t", ID), new PartitionRecord(ID, 0, List.of(1), List.of(1), 1, 0, 0)),
                        status -> imageIndexWhenDone.add(stateMachine.image().appliedIndex()))
                .add(batch(new ConfigRecord("t", "retention.ms", "1000")), null);

        stateMachine.onApply(iter);

        assertThat(seen).extracting(MetadataImage::appliedIndex).containsExactly(10L, 11L);
        assertThat(seen.get(0).topic("t").orElseThrow().partitions()).containsOnlyKeys(0);
        assertThat(seen.get(0).topic("t").orElseThrow().configs()).isEmpty();
        assertThat(stateMachine.image().topic("t").orElseThrow().configs()).containsEntry("retention.ms", "1000");
        assertThat(imageIndexWhenDone).as("closure runs after the image is published").containsExactly(10L);
        assertThat(iter.rollbackStatus()).isNull();
    }

    @Test
    @Timeout(10)
    void shouldStopAndRollBackWhenEntryCannotBeDecoded() {
        List<Status> closureStatuses = new ArrayList<>();
        ScriptedIterator iter = new ScriptedIterator(5)
                .add(batch(new TopicRecord("t", ID)), null)
                .add(new byte[] {0, 0, 0, 0, 1, 99}, closureStatuses::add)
                .add(batch(new ConfigRecord("t", "retention.ms", "1")), closureStatuses::add);

        stateMachine.onApply(iter);

        assertThat(iter.rollbackIndex()).isEqualTo(6);
        assertThat(iter.rollbackTail()).isEqualTo(1);
        assertThat(iter.rollbackStatus().getRaftError()).isEqualTo(RaftError.ESTATEMACHINE);
        assertThat(iter.rollbackStatus().getErrorMsg()).contains("Cannot apply metadata log entry 6");
        assertThat(stateMachine.image().appliedIndex()).isEqualTo(5);
        assertThat(stateMachine.image().topic("t").orElseThrow().configs()).isEmpty();
        assertThat(closureStatuses).as("jraft, not the state machine, fails the closures").isEmpty();
    }

    @Test
    @Timeout(10)
    void shouldStopAndRollBackWhenRecordBreaksAnInvariant() {
        ScriptedIterator iter = new ScriptedIterator(1)
                .add(batch(new TopicRecord("t", ID)), null)
                .add(batch(new TopicRecord("t", Uuid.randomUuid())), null);

        stateMachine.onApply(iter);

        assertThat(iter.rollbackIndex()).isEqualTo(2);
        assertThat(iter.rollbackStatus().getErrorMsg()).contains("topic t already exists");
        assertThat(stateMachine.image().topic("t").orElseThrow().topicId()).isEqualTo(ID);
    }

    @Test
    @Timeout(10)
    void shouldKeepApplyingWhenAListenerThrows() {
        List<Long> second = new ArrayList<>();
        stateMachine.registerListener((previous, current) -> {
            throw new IllegalStateException("listener bug");
        });
        stateMachine.registerListener((previous, current) -> second.add(current.appliedIndex()));

        stateMachine.onApply(new ScriptedIterator(1).add(batch(new TopicRecord("t", ID)), null));

        assertThat(second).containsExactly(1L);
        assertThat(stateMachine.image().topics()).containsOnlyKeys("t");
    }

    @Test
    @Timeout(10)
    void shouldTrackLeadershipWhenLeaderStartsAndStops() {
        CompletableFuture<Long> activeBefore = stateMachine.whenActive();
        assertThat(stateMachine.leaderTerm()).isEqualTo(-1);
        assertThat(activeBefore).isNotDone();

        stateMachine.onLeaderStart(3);

        assertThat(stateMachine.leaderTerm()).isEqualTo(3);
        assertThat(activeBefore).isCompletedWithValue(3L);
        assertThat(stateMachine.whenActive()).isCompletedWithValue(3L);
        assertThat(stateMachine.leaderKnown()).isDone();

        stateMachine.onLeaderStop(new Status(RaftError.EPERM, "stepped down"));

        assertThat(stateMachine.leaderTerm()).isEqualTo(-1);
        CompletableFuture<Long> next = stateMachine.whenActive();
        assertThat(next).isNotDone();
        stateMachine.onLeaderStart(5);
        assertThat(next).isCompletedWithValue(5L);
    }

    @Test
    @Timeout(10)
    void shouldAdvanceTheNextProducerIdWhenProducerIdsRecordsAreApplied() {
        assertThat(stateMachine.image().nextProducerId()).isZero();
        ScriptedIterator iter = new ScriptedIterator(1)
                .add(batch(new ProducerIdsRecord(1, 1000)), null)
                .add(batch(new TopicRecord("t", ID), new ProducerIdsRecord(2, 2000)), null);

        stateMachine.onApply(iter);

        assertThat(iter.rollbackStatus()).isNull();
        assertThat(stateMachine.image().appliedIndex()).isEqualTo(2);
        assertThat(stateMachine.image().nextProducerId()).isEqualTo(2000);
        assertThat(stateMachine.image().topics()).containsOnlyKeys("t");
    }

    @Test
    @Timeout(10)
    void shouldStopAndRollBackWhenProducerIdsRecordMovesTheNextIdBackwards() {
        ScriptedIterator iter = new ScriptedIterator(1)
                .add(batch(new ProducerIdsRecord(1, 2000)), null)
                .add(batch(new TopicRecord("t", ID), new ProducerIdsRecord(2, 1000)), null);

        stateMachine.onApply(iter);

        assertThat(iter.rollbackIndex()).isEqualTo(2);
        assertThat(iter.rollbackStatus().getRaftError()).isEqualTo(RaftError.ESTATEMACHINE);
        assertThat(iter.rollbackStatus().getErrorMsg()).contains("next producer id is already 2000");
        assertThat(stateMachine.image().nextProducerId()).isEqualTo(2000);
        assertThat(stateMachine.image().topics()).as("the whole entry is rolled back").isEmpty();
    }

    @Test
    @Timeout(10)
    void shouldStopAndRollBackWhenProducerIdsRecordDoesNotAdvanceTheNextId() {
        ScriptedIterator iter = new ScriptedIterator(1)
                .add(batch(new ProducerIdsRecord(1, 1000)), null)
                .add(batch(new ProducerIdsRecord(1, 1000)), null);

        stateMachine.onApply(iter);

        assertThat(iter.rollbackIndex()).isEqualTo(2);
        assertThat(stateMachine.image().nextProducerId()).isEqualTo(1000);
    }
}
