package dev.millrace.broker.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Sequence, epoch and duplicate rules of idempotent appends through {@link PartitionLog}. */
@Timeout(30)
class IdempotentAppendTest {

    private static final long PID = 4242L;

    @TempDir
    Path tmp;

    private final ManualTime time = new ManualTime(1_000_000L);
    private PartitionLog log;

    @AfterEach
    void closeLog() {
        if (log != null) {
            log.close();
        }
    }

    private PartitionLog open() throws IOException {
        log = PartitionLog.open(tmp.resolve("topic-0").toFile(), new LogConfig(Map.of()), time, Scheduler.IMMEDIATE);
        return log;
    }

    /** A batch of {@code count} records from producer {@code producerId} starting at {@code sequence}. */
    static MemoryRecords idempotent(long producerId, int epoch, int sequence, int count) {
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            records[i] = new SimpleRecord(1_000L + i, null, TestBatches.bytes("p" + producerId + "-s" + (sequence + i)));
        }
        return MemoryRecords.withIdempotentRecords(Compression.NONE, producerId, (short) epoch, sequence, records);
    }

    static MemoryRecords concat(MemoryRecords... parts) {
        int size = 0;
        for (MemoryRecords part : parts) {
            size += part.sizeInBytes();
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        for (MemoryRecords part : parts) {
            buffer.put(part.buffer().duplicate());
        }
        buffer.flip();
        return MemoryRecords.readableRecords(buffer);
    }

    @Test
    void shouldAppendBatchesInSequenceAndRememberTheLastFive() throws IOException {
        open();
        for (int i = 0; i < 7; i++) {
            LogAppendInfo info = log.appendAsLeader(idempotent(PID, 0, i * 3, 3), 0);
            assertThat(info.firstOffset()).isEqualTo(i * 3L);
            assertThat(info.duplicate()).isFalse();
        }
        ProducerStateEntry entry = log.producerState().entry(PID);
        assertThat(entry.batches()).hasSize(ProducerStateEntry.MAX_BATCHES);
        assertThat(entry.lastSequence()).isEqualTo(20);
        assertThat(entry.batches().iterator().next().firstSequence()).isEqualTo(6);
    }

    @Test
    void shouldReturnTheOriginalOffsetsForADuplicateOfEachOfTheLastFiveBatchesAndWriteNothing() throws IOException {
        open();
        List<LogAppendInfo> originals = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            log.appendAsLeader(TestBatches.batch(2, 5L), 0);
            originals.add(log.appendAsLeader(idempotent(PID, 1, i * 2, 2), 0));
        }
        long endBefore = log.logEndOffset();
        long sizeBefore = log.size();
        for (int i = 1; i < 6; i++) {
            LogAppendInfo retry = log.appendAsLeader(idempotent(PID, 1, i * 2, 2), 0);
            assertThat(retry.duplicate()).as("batch %d", i).isTrue();
            assertThat(retry.firstOffset()).as("batch %d", i).isEqualTo(originals.get(i).firstOffset());
            assertThat(retry.lastOffset()).as("batch %d", i).isEqualTo(originals.get(i).lastOffset());
            assertThat(retry.recordCount()).isZero();
        }
        assertThat(log.logEndOffset()).isEqualTo(endBefore);
        assertThat(log.size()).isEqualTo(sizeBefore);
        // the sixth batch back is forgotten: its retry is out of sequence, not a duplicate
        assertThatThrownBy(() -> log.appendAsLeader(idempotent(PID, 1, 0, 2), 0))
                .isInstanceOf(OutOfOrderSequenceException.class);
        assertThat(log.appendAsLeader(idempotent(PID, 1, 12, 2), 0).firstOffset()).isEqualTo(endBefore);
    }

    @Test
    void shouldRejectASequenceGapAndLeaveTheLogUnchanged() throws IOException {
        open();
        log.appendAsLeader(idempotent(PID, 0, 0, 3), 0);
        long sizeBefore = log.size();
        assertThatThrownBy(() -> log.appendAsLeader(idempotent(PID, 0, 5, 1), 0))
                .isInstanceOf(OutOfOrderSequenceException.class)
                .hasMessageContaining(String.valueOf(PID))
                .hasMessageContaining("expected sequence 3, received 5");
        assertThat(log.logEndOffset()).isEqualTo(3);
        assertThat(log.size()).isEqualTo(sizeBefore);
        assertThat(log.appendAsLeader(idempotent(PID, 0, 3, 1), 0).firstOffset()).isEqualTo(3);
    }

    @Test
    void shouldFenceABatchFromAnOlderEpoch() throws IOException {
        open();
        log.appendAsLeader(idempotent(PID, 5, 0, 1), 0);
        assertThatThrownBy(() -> log.appendAsLeader(idempotent(PID, 3, 1, 1), 0))
                .isInstanceOf(InvalidProducerEpochException.class)
                .hasMessageContaining(String.valueOf(PID))
                .hasMessageContaining("epoch 3")
                .hasMessageContaining("epoch 5");
        assertThat(log.logEndOffset()).isEqualTo(1);
    }

    @Test
    void shouldAcceptANewEpochOnlyAtSequenceZero() throws IOException {
        open();
        log.appendAsLeader(idempotent(PID, 1, 0, 4), 0);
        assertThatThrownBy(() -> log.appendAsLeader(idempotent(PID, 2, 4, 1), 0))
                .isInstanceOf(OutOfOrderSequenceException.class)
                .hasMessageContaining("sequence 0");
        LogAppendInfo bumped = log.appendAsLeader(idempotent(PID, 2, 0, 2), 0);
        assertThat(bumped.firstOffset()).isEqualTo(4);
        assertThat(log.producerState().entry(PID).producerEpoch()).isEqualTo((short) 2);
        assertThat(log.producerState().entry(PID).batches()).hasSize(1);
        // a retry from the old epoch is fenced, not a duplicate
        assertThatThrownBy(() -> log.appendAsLeader(idempotent(PID, 1, 0, 4), 0))
                .isInstanceOf(InvalidProducerEpochException.class);
    }

    @Test
    void shouldAcceptAnUnknownProducerAtAnySequence() throws IOException {
        open();
        assertThat(log.appendAsLeader(idempotent(PID, 0, 17, 2), 0).firstOffset()).isZero();
        assertThat(log.appendAsLeader(idempotent(PID, 0, 19, 1), 0).firstOffset()).isEqualTo(2);
    }

    @Test
    void shouldWrapTheSequenceAfterIntegerMaxValue() throws IOException {
        open();
        log.appendAsLeader(idempotent(PID, 0, Integer.MAX_VALUE, 1), 0);
        assertThat(log.appendAsLeader(idempotent(PID, 0, 0, 2), 0).firstOffset()).isEqualTo(1);
    }

    @Test
    void shouldRejectTheWholeAppendWhenOneBatchIsOutOfSequence() throws IOException {
        open();
        assertThatThrownBy(() -> log.appendAsLeader(concat(idempotent(PID, 0, 0, 2), TestBatches.batch(1, 5L),
                idempotent(PID, 0, 3, 1)), 0))
                .isInstanceOf(OutOfOrderSequenceException.class)
                .hasMessageContaining("expected sequence 2, received 3");
        assertThat(log.logEndOffset()).isZero();
        assertThat(log.producerState().entry(PID)).isNull();
        LogAppendInfo both = log.appendAsLeader(concat(idempotent(PID, 0, 0, 2), idempotent(PID, 0, 2, 1)), 0);
        assertThat(both.lastOffset()).isEqualTo(2);
        assertThat(log.producerState().entry(PID).batches()).hasSize(2);
    }

    @Test
    void shouldReturnTheOriginalRangeWhenAWholeMultiBatchAppendIsRetried() throws IOException {
        open();
        log.appendAsLeader(TestBatches.batch(3, 5L), 0);
        log.appendAsLeader(concat(idempotent(PID, 0, 0, 2), idempotent(PID, 0, 2, 2)), 0);
        LogAppendInfo retry = log.appendAsLeader(concat(idempotent(PID, 0, 0, 2), idempotent(PID, 0, 2, 2)), 0);
        assertThat(retry.duplicate()).isTrue();
        assertThat(retry.firstOffset()).isEqualTo(3);
        assertThat(retry.lastOffset()).isEqualTo(6);
        assertThat(log.logEndOffset()).isEqualTo(7);
    }

    @Test
    void shouldRefuseAnAppendMixingADuplicateWithANewBatch() throws IOException {
        open();
        log.appendAsLeader(idempotent(PID, 0, 0, 2), 0);
        assertThatThrownBy(() -> log.appendAsLeader(concat(idempotent(PID, 0, 0, 2), idempotent(PID, 0, 2, 1)), 0))
                .isInstanceOf(InvalidRecordException.class)
                .hasMessageContaining("duplicates");
        assertThat(log.logEndOffset()).isEqualTo(2);
    }

    @Test
    void shouldLeaveNonIdempotentAppendsUnaffected() throws IOException {
        open();
        for (int i = 0; i < 10; i++) {
            assertThat(log.appendAsLeader(TestBatches.batch(2, 5L), 0).firstOffset()).isEqualTo(i * 2L);
        }
        assertThat(log.producerState().producerCount()).isZero();
        assertThat(TestBatches.readAll(log, 0, 1 << 20)).hasSize(20);
    }

    @Test
    void shouldCheckOnlyTheEpochOnAFollowerAppend() throws IOException {
        open();
        MemoryRecords first = idempotent(PID, 2, 0, 2);
        log.appendAsFollower(first);
        MemoryRecords gap = idempotent(PID, 2, 10, 1);
        gap.batches().iterator().next().setLastOffset(2);
        assertThat(log.appendAsFollower(gap).firstOffset()).isEqualTo(2);
        assertThat(log.producerState().entry(PID).lastSequence()).isEqualTo(10);
        MemoryRecords stale = idempotent(PID, 1, 11, 1);
        stale.batches().iterator().next().setLastOffset(3);
        assertThatThrownBy(() -> log.appendAsFollower(stale)).isInstanceOf(InvalidProducerEpochException.class);
        assertThat(log.logEndOffset()).isEqualTo(3);
    }

    @Test
    void shouldForgetProducersAndSnapshotsBelowTheLogStartOnRetention() throws IOException {
        open();
        log.appendAsLeader(idempotent(1L, 0, 0, 2), 0);
        log.roll();
        log.appendAsLeader(idempotent(2L, 0, 0, 2), 0);
        log.roll();
        log.appendAsLeader(TestBatches.batch(1, 5L), 0);
        File dir = log.dir();
        assertThat(ProducerStateSnapshotFileTest.snapshotOffsets(dir)).containsExactly(2L, 4L);
        log.maybeIncrementLogStartOffset(4);
        assertThat(log.deleteOldSegments()).isEqualTo(2);
        assertThat(log.producerState().entry(1L)).isNull();
        assertThat(log.producerState().entry(2L)).isNull();
        assertThat(ProducerStateSnapshotFileTest.snapshotOffsets(dir)).containsExactly(4L);
    }
}
