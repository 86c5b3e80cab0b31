package dev.millrace.broker.log;

import static dev.millrace.broker.log.TestBatches.batch;
import static dev.millrace.broker.log.TestBatches.readAll;
import static dev.millrace.broker.log.TestBatches.records;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.Pipe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.network.TransferableChannel;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.FileRecords.TimestampAndOffset;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class PartitionLogTest {

    @TempDir
    Path tmp;

    private final ManualTime time = new ManualTime(1_000_000L);
    private PartitionLog log;

    private PartitionLog open(Map<String, ?> settings) throws IOException {
        log = PartitionLog.open(tmp.resolve("topic-0").toFile(), new LogConfig(settings), time, Scheduler.IMMEDIATE);
        return log;
    }

    private PartitionLog reopen() throws IOException {
        LogConfig config = log.config();
        log.close();
        log = PartitionLog.open(tmp.resolve("topic-0").toFile(), config, time, Scheduler.IMMEDIATE);
        return log;
    }

    @AfterEach
    void closeLog() {
        if (log != null) {
            log.close();
        }
    }

    @Test
    void shouldAssignConsecutiveOffsetsAndReadThemBack() throws IOException {
        open(Map.of());
        LogAppendInfo first = log.appendAsLeader(batch(3, 10L), 7);
        LogAppendInfo second = log.appendAsLeader(batch(2, 20L), 7);

        assertThat(first.firstOffset()).isEqualTo(0);
        assertThat(first.lastOffset()).isEqualTo(2);
        assertThat(second.firstOffset()).isEqualTo(3);
        assertThat(second.lastOffset()).isEqualTo(4);
        assertThat(log.logEndOffset()).isEqualTo(5);
        List<TestBatches.Read> all = readAll(log, 0, 1024);
        assertThat(all).extracting(TestBatches.Read::offset).containsExactly(0L, 1L, 2L, 3L, 4L);
        assertThat(all).extracting(TestBatches.Read::value).containsExactly("v0", "v1", "v2", "v0", "v1");
        for (RecordBatch b : log.read(0, 1024, true).records().batches()) {
            assertThat(b.partitionLeaderEpoch()).isEqualTo(7);
        }
    }

    @Test
    void shouldReadCompressedBatchesOfEveryCodec() throws IOException {
        open(Map.of());
        for (Compression c : List.of(Compression.NONE, Compression.gzip().build(), Compression.snappy().build(),
                Compression.lz4().build(), Compression.zstd().build())) {
            log.appendAsLeader(batch(5, 1L, c, i -> null, i -> TestBatches.bytes("value-" + i)), 0);
        }
        List<TestBatches.Read> all = readAll(log, 0, 1 << 20);
        assertThat(all).hasSize(25);
        assertThat(all).extracting(TestBatches.Read::offset).isSorted().doesNotHaveDuplicates();
        assertThat(all.get(24).value()).isEqualTo("value-4");
    }

    @Test
    void shouldReadFromTheBatchHoldingAMidBatchOffsetAndHonourTheByteLimit() throws IOException {
        open(Map.of(LogConfig.INDEX_INTERVAL_BYTES, "0"));
        for (int i = 0; i < 10; i++) {
            log.appendAsLeader(batch(10, i), 0);
        }
        FetchDataInfo mid = log.read(55, 1, true);
        List<TestBatches.Read> firstBatch = records(mid.records());
        assertThat(firstBatch.get(0).offset()).isEqualTo(50);
        assertThat(firstBatch).hasSize(10);

        int oneBatch = mid.records().sizeInBytes();
        FetchDataInfo limited = log.read(0, oneBatch * 3, false);
        assertThat(limited.records().sizeInBytes()).isEqualTo(oneBatch * 3);
        assertThat(records(limited.records())).hasSize(30);

        FetchDataInfo none = log.read(0, oneBatch - 1, false);
        assertThat(records(none.records())).isEmpty();
    }

    @Test
    void shouldReturnAFileBackedSliceThatTransfersWithZeroCopy() throws IOException {
        open(Map.of());
        log.appendAsLeader(batch(4, 1L), 0);
        FetchDataInfo info = log.read(0, 1 << 20, false);
        assertThat(info.records()).isInstanceOf(FileRecords.class);

        Pipe pipe = Pipe.open();
        int size = info.records().sizeInBytes();
        ByteBuffer received = ByteBuffer.allocate(size);
        try (Pipe.SinkChannel sink = pipe.sink(); Pipe.SourceChannel source = pipe.source()) {
            int written = ((FileRecords) info.records()).writeTo(new PipeChannel(sink), 0, size);
            assertThat(written).isEqualTo(size);
            while (received.hasRemaining()) {
                source.read(received);
            }
        }
        received.flip();
        assertThat(records(MemoryRecords.readableRecords(received))).extracting(TestBatches.Read::value)
                .containsExactly("v0", "v1", "v2", "v3");
    }

    @Test
    void shouldRejectReadsOutsideTheLogWithTheRange() throws IOException {
        open(Map.of());
        log.appendAsLeader(batch(5, 1L), 0);
        assertThat(records(log.read(5, 100, true).records())).isEmpty();
        assertThatThrownBy(() -> log.read(6, 100, true)).isInstanceOf(OffsetOutOfRangeException.class)
                .hasMessageContaining("Offset 6").hasMessageContaining("from 0").hasMessageContaining("to 5");
        log.maybeIncrementLogStartOffset(3);
        assertThatThrownBy(() -> log.read(2, 100, true)).isInstanceOf(OffsetOutOfRangeException.class)
                .hasMessageContaining("Offset 2").hasMessageContaining("from 3");
        assertThat(records(log.read(3, 1 << 20, true).records())).extracting(TestBatches.Read::offset)
                .contains(3L, 4L);
    }

    @Test
    void shouldRejectBadBatchesAndLeaveTheLogUnchanged() throws IOException {
        open(Map.of(LogConfig.MAX_MESSAGE_BYTES, "2000", LogConfig.SEGMENT_BYTES, "100000"));
        log.appendAsLeader(batch(3, 1L), 0);
        long endBefore = log.logEndOffset();
        long sizeBefore = log.size();

        MemoryRecords big = batch(1, 1L, Compression.NONE, i -> null, i -> new byte[3000]);
        assertThatThrownBy(() -> log.appendAsLeader(big, 0)).isInstanceOf(RecordTooLargeException.class)
                .hasMessageContaining("max.message.bytes=2000");

        MemoryRecords badCrc = batch(3, 1L);
        badCrc.buffer().put(badCrc.buffer().limit() - 1, (byte) (badCrc.buffer().get(badCrc.buffer().limit() - 1) ^ 1));
        assertThatThrownBy(() -> log.appendAsLeader(badCrc, 0)).isInstanceOf(CorruptRecordException.class)
                .hasMessageContaining("Batch at byte 0").hasMessageContaining("crc");

        MemoryRecords v1 = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V1, Compression.NONE,
                new SimpleRecord(1L, "k".getBytes(), "v".getBytes()));
        assertThatThrownBy(() -> log.appendAsLeader(v1, 0)).isInstanceOf(InvalidRecordException.class)
                .hasMessageContaining("magic 1");

        MemoryRecords good = batch(2, 1L);
        ByteBuffer truncated = ByteBuffer.allocate(good.sizeInBytes() + 10);
        truncated.put(good.buffer().duplicate()).put(new byte[10]).flip();
        assertThatThrownBy(() -> log.appendAsLeader(MemoryRecords.readableRecords(truncated), 0))
                .isInstanceOf(CorruptRecordException.class).hasMessageContaining("10 trailing bytes");

        assertThatThrownBy(() -> log.appendAsLeader(MemoryRecords.EMPTY, 0))
                .isInstanceOf(InvalidRecordException.class).hasMessageContaining("no record batch");

        ByteBuffer huge = ByteBuffer.allocate(100_001);
        assertThatThrownBy(() -> log.appendAsLeader(MemoryRecords.readableRecords(huge), 0))
                .isInstanceOf(RecordBatchTooLargeException.class).hasMessageContaining("segment.bytes=100000");

        assertThat(log.logEndOffset()).isEqualTo(endBefore);
        assertThat(log.size()).isEqualTo(sizeBefore);
        log.appendAsLeader(batch(1, 1L), 0);
        assertThat(readAll(reopen(), 0, 1 << 20)).hasSize(4);
    }

    @Test
    void shouldRejectFollowerBatchesWhoseOffsetsDoNotIncrease() throws IOException {
        open(Map.of());
        log.appendAsFollower(MemoryRecords.withRecords(10L, Compression.NONE,
                new SimpleRecord(1L, null, "a".getBytes()), new SimpleRecord(1L, null, "b".getBytes())));
        assertThat(log.logEndOffset()).isEqualTo(12);

        MemoryRecords backwards = MemoryRecords.withRecords(11L, Compression.NONE, new SimpleRecord(1L, null, "c".getBytes()));
        assertThatThrownBy(() -> log.appendAsFollower(backwards)).isInstanceOf(InvalidRecordException.class)
                .hasMessageContaining("starts at offset 11").hasMessageContaining("at least 12");

        ByteBuffer twoBatches = ByteBuffer.allocate(1024);
        twoBatches.put(MemoryRecords.withRecords(20L, Compression.NONE, new SimpleRecord(1L, null, "d".getBytes())).buffer());
        twoBatches.put(MemoryRecords.withRecords(15L, Compression.NONE, new SimpleRecord(1L, null, "e".getBytes())).buffer());
        twoBatches.flip();
        assertThatThrownBy(() -> log.appendAsFollower(MemoryRecords.readableRecords(twoBatches)))
                .isInstanceOf(InvalidRecordException.class).hasMessageContaining("starts at offset 15")
                .hasMessageContaining("at least 21");
        assertThat(log.logEndOffset()).isEqualTo(12);
    }

    @Test
    void shouldRequireKeysInACompactedLog() throws IOException {
        open(Map.of(LogConfig.CLEANUP_POLICY, "compact"));
        assertThatThrownBy(() -> log.appendAsLeader(batch(2, 1L), 0)).isInstanceOf(InvalidRecordException.class)
                .hasMessageContaining("Record 0").hasMessageContaining("no key");
        assertThat(log.logEndOffset()).isZero();
    }

    @Test
    void shouldStampLogAppendTimeWhenConfigured() throws IOException {
        open(Map.of(LogConfig.MESSAGE_TIMESTAMP_TYPE, "LogAppendTime"));
        log.appendAsLeader(batch(2, 5L), 0);
        for (RecordBatch b : log.read(0, 1 << 20, true).records().batches()) {
            assertThat(b.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
            assertThat(b.maxTimestamp()).isEqualTo(time.milliseconds());
        }
    }

    @Test
    void shouldFindTheFirstOffsetAtOrAfterATimestampAcrossSegments() throws IOException {
        open(Map.of(LogConfig.SEGMENT_BYTES, "600", LogConfig.INDEX_INTERVAL_BYTES, "1"));
        for (int i = 0; i < 30; i++) {
            log.appendAsLeader(batch(2, 100L + i * 10), 0);
        }
        assertThat(log.numberOfSegments()).isGreaterThan(3);
        Optional<TimestampAndOffset> at = log.offsetForTimestamp(155);
        assertThat(at).isPresent();
        assertThat(at.get().offset).isEqualTo(12);
        assertThat(at.get().timestamp).isEqualTo(160);
        assertThat(log.offsetForTimestamp(100).get().offset).isZero();
        assertThat(log.offsetForTimestamp(390).get().offset).isEqualTo(58);
        assertThat(log.offsetForTimestamp(391)).isEmpty();
        assertThat(reopen().offsetForTimestamp(155).get().offset).isEqualTo(12);
    }

    @Test
    void shouldRollBySizeByAgeAndWhenTheIndexIsFull() throws IOException {
        open(Map.of(LogConfig.SEGMENT_BYTES, "1000"));
        int batchSize = batch(2, 1L).sizeInBytes();
        int perSegment = 1000 / batchSize;
        for (int i = 0; i < perSegment * 3; i++) {
            log.appendAsLeader(batch(2, 1L), 0);
        }
        assertThat(log.numberOfSegments()).isEqualTo(3);
        assertThat(log.segmentBaseOffsets()).containsExactly(0L, perSegment * 2L, perSegment * 4L);
        log.close();

        Path ageDir = tmp.resolve("age-0");
        log = PartitionLog.open(ageDir.toFile(), new LogConfig(Map.of(LogConfig.SEGMENT_MS, "1000")), time,
                Scheduler.IMMEDIATE);
        log.appendAsLeader(batch(1, time.milliseconds()), 0);
        time.advance(999);
        log.appendAsLeader(batch(1, time.milliseconds()), 0);
        assertThat(log.numberOfSegments()).isEqualTo(1);
        time.advance(2);
        log.appendAsLeader(batch(1, time.milliseconds()), 0);
        assertThat(log.segmentBaseOffsets()).containsExactly(0L, 2L);
        // age runs from the first batch's timestamp to the new batch's, not to the broker's clock:
        // old producer timestamps must not roll a segment per append
        long firstOfSegment = time.milliseconds();
        time.advance(1_000_000);
        log.appendAsLeader(batch(1, 5L), 0);
        log.appendAsLeader(batch(1, 500L), 0);
        assertThat(log.segmentBaseOffsets()).containsExactly(0L, 2L);
        log.appendAsLeader(batch(1, firstOfSegment + 1001), 0);
        assertThat(log.segmentBaseOffsets()).containsExactly(0L, 2L, 5L);
        log.close();

        Path indexDir = tmp.resolve("index-0");
        log = PartitionLog.open(indexDir.toFile(), new LogConfig(Map.of(LogConfig.SEGMENT_INDEX_BYTES, "40",
                LogConfig.INDEX_INTERVAL_BYTES, "0")), time, Scheduler.IMMEDIATE);
        for (int i = 0; i < 12; i++) {
            log.appendAsLeader(batch(1, 100L + i), 0);
        }
        assertThat(log.numberOfSegments()).isGreaterThan(2);
        assertThat(readAll(log, 0, 1 << 20)).hasSize(12);
    }

    @Test
    void shouldKeepEverythingAcrossACleanCloseAndReopen() throws IOException {
        open(Map.of(LogConfig.SEGMENT_BYTES, "700"));
        for (int i = 0; i < 40; i++) {
            log.appendAsLeader(batch(3, i), 1);
        }
        List<TestBatches.Read> before = readAll(log, 0, 1 << 20);
        List<Long> segmentsBefore = log.segmentBaseOffsets();
        log.close();
        log.close();
        assertThat(new File(log.dir(), LogFiles.CLEAN_SHUTDOWN)).exists();
        assertThatThrownBy(() -> log.read(0, 10, true)).isInstanceOf(KafkaStorageException.class)
                .hasMessageContaining("closed");

        log = PartitionLog.open(tmp.resolve("topic-0").toFile(), log.config(), time, Scheduler.IMMEDIATE);
        assertThat(new File(log.dir(), LogFiles.CLEAN_SHUTDOWN)).doesNotExist();
        assertThat(log.segmentBaseOffsets()).isEqualTo(segmentsBefore);
        assertThat(log.recoveryPoint()).isEqualTo(120);
        assertThat(readAll(log, 0, 1 << 20)).isEqualTo(before);
        assertThat(log.appendAsLeader(batch(1, 1L), 1).firstOffset()).isEqualTo(120);
    }

    @Test
    void shouldRebuildMissingAndCorruptIndexes() throws IOException {
        open(Map.of(LogConfig.SEGMENT_BYTES, "1200", LogConfig.INDEX_INTERVAL_BYTES, "100"));
        for (int i = 0; i < 60; i++) {
            log.appendAsLeader(batch(2, 1000L + i), 0);
        }
        List<Long> bases = log.segmentBaseOffsets();
        assertThat(bases).hasSizeGreaterThan(3);
        File dir = log.dir();
        log.close();

        Files.delete(LogFiles.offsetIndexFile(dir, bases.get(0)).toPath());
        Files.delete(LogFiles.timeIndexFile(dir, bases.get(1)).toPath());
        try (RandomAccessFile index = new RandomAccessFile(LogFiles.offsetIndexFile(dir, bases.get(2)), "rw")) {
            index.seek(8);
            index.writeInt(0);
            index.writeInt(0);
        }
        try (RandomAccessFile index = new RandomAccessFile(LogFiles.timeIndexFile(dir, bases.get(3)), "rw")) {
            index.setLength(index.length() + 12);
        }

        log = PartitionLog.open(dir, log.config(), time, Scheduler.IMMEDIATE);
        assertThat(LogFiles.offsetIndexFile(dir, bases.get(0))).exists();
        assertThat(LogFiles.offsetIndexFile(dir, bases.get(0)).length()).isPositive();
        List<TestBatches.Read> all = readAll(log, 0, 1 << 20);
        assertThat(all).hasSize(120);
        assertThat(all).extracting(TestBatches.Read::offset).containsExactlyElementsOf(
                java.util.stream.LongStream.range(0, 120).boxed().toList());
        long target = bases.get(2) + 3;
        assertThat(records(log.read(target, 1, true).records()).get(0).offset()).isLessThanOrEqualTo(target);
        assertThat(log.offsetForTimestamp(1000L + 50).get().offset).isEqualTo(100);
    }

    @Test
    void shouldFlushOnEveryAppendWhenFlushMessagesIsOne() throws IOException {
        open(Map.of(LogConfig.FLUSH_MESSAGES, "1"));
        log.appendAsLeader(batch(3, 1L), 0);
        assertThat(log.recoveryPoint()).isEqualTo(3);
        log.appendAsLeader(batch(2, 1L), 0);
        assertThat(log.recoveryPoint()).isEqualTo(5);
        assertThat(log.groupCommitFlushCount()).isEqualTo(2);
    }

    @Test
    void shouldFlushByMessageCount() throws IOException {
        open(Map.of(LogConfig.FLUSH_MESSAGES, "10"));
        log.appendAsLeader(batch(4, 1L), 0);
        log.appendAsLeader(batch(4, 1L), 0);
        assertThat(log.recoveryPoint()).isZero();
        log.appendAsLeader(batch(4, 1L), 0);
        assertThat(log.recoveryPoint()).isEqualTo(12);
    }

    @Test
    void shouldFlushByTime() throws IOException {
        open(Map.of(LogConfig.FLUSH_MS, "1000"));
        log.appendAsLeader(batch(4, 1L), 0);
        log.maybeFlushByTime();
        assertThat(log.recoveryPoint()).isZero();
        time.advance(1000);
        log.maybeFlushByTime();
        assertThat(log.recoveryPoint()).isEqualTo(4);
    }

    @Test
    void shouldNeverFlushWithTheDefaultPolicyUntilClose() throws IOException {
        open(Map.of());
        log.appendAsLeader(batch(4, 1L), 0);
        time.advance(1_000_000);
        log.maybeFlushByTime();
        assertThat(log.recoveryPoint()).isZero();
        reopen();
        assertThat(log.recoveryPoint()).isEqualTo(4);
    }

    /** Adapts a pipe to kafka-clients' TransferableChannel so FileRecords can transferTo it. */
    private static final class PipeChannel implements TransferableChannel {
        private final Pipe.SinkChannel sink;

        PipeChannel(Pipe.SinkChannel sink) {
            this.sink = sink;
        }

        @Override
        public boolean hasPendingWrites() {
            return false;
        }

        @Override
        public long transferFrom(FileChannel fileChannel, long position, long count) throws IOException {
            return fileChannel.transferTo(position, count, sink);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            return sink.write(srcs, offset, length);
        }

        @Override
        public long write(ByteBuffer[] srcs) throws IOException {
            return sink.write(srcs);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            return sink.write(src);
        }

        @Override
        public boolean isOpen() {
            return sink.isOpen();
        }

        @Override
        public void close() throws IOException {
            sink.close();
        }
    }
}
