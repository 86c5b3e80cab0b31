package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.delay.SystemTimer;
import dev.millrace.protocol.selector.Selector;

/** Selective acquisition: members with a JMS selector acquire only what they match, the rest stays available. */
@Timeout(10)
class SharePartitionSelectorTest {

    private static final SharePartitionKey KEY = new SharePartitionKey("g", Uuid.randomUuid(),
            new TopicPartition("queue", 0));
    static final MemberFilter RED = filter("color = 'red'");
    static final MemberFilter BLUE = filter("color = 'blue'");

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    final InMemoryShareLog log = new InMemoryShareLog();
    private final SharePartitionListener listener = QuietListener.INSTANCE;

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    SharePartition partition(ShareGroupConfig config) {
        return new SharePartition(KEY, log, config, timer, clock, listener, 0, lookahead());
    }

    /** How selective members' next scans run ahead; none here, see {@link SharePartitionSelectorLookaheadTest}. */
    Executor lookahead() {
        return null;
    }

    private static MemberFilter filter(String selector) {
        return new MemberFilter(Selector.compile(selector), false);
    }

    static AcknowledgementBatch ack(long first, long last, AcknowledgeType type) {
        return new AcknowledgementBatch(first, last, new byte[] {type.id()});
    }

    /** Appends {@code batches} batches of {@code batchSize} records, every {@code every}-th red, the others blue. */
    void appendRedEvery(int batches, int batchSize, int every) {
        String[] colors = new String[batchSize];
        for (int i = 0; i < colors.length; i++) {
            colors[i] = i % every == 0 ? "red" : "blue";
        }
        for (int i = 0; i < batches; i++) {
            log.appendColors(colors);
        }
    }

    static List<Long> offsetsOf(AcquireResult result) {
        List<Long> offsets = new ArrayList<>();
        for (Record record : result.records().records()) {
            offsets.add(record.offset());
        }
        return offsets;
    }

    private static List<String> values(AcquireResult result) {
        List<String> values = new ArrayList<>();
        for (Record record : result.records().records()) {
            boolean acquired = result.acquired().stream().anyMatch(b -> record.offset() >= b.firstOffset()
                    && record.offset() <= b.lastOffset());
            if (acquired) {
                values.add(new String(Utils.toArray(record.value()), StandardCharsets.UTF_8));
            }
        }
        return values;
    }

    @Test
    void shouldHandEachMemberOnlyTheRecordsItsSelectorMatches() {
        log.appendColors("red", "blue", "red", "blue", null);
        SharePartition partition = partition(ShareGroupConfig.defaults());

        AcquireResult red = partition.acquire("r", RED, 10, 1 << 20);

        assertThat(red.acquired()).containsExactly(new AcquiredBatch(0, 0, 1), new AcquiredBatch(2, 2, 1));
        assertThat(values(red)).containsExactly("v0", "v2");
        assertThat(partition.state(1)).contains(RecordState.AVAILABLE);
        assertThat(partition.deliveryCount(1)).as("not acquired, so not counted").isZero();
        assertThat(partition.state(4)).contains(RecordState.AVAILABLE);

        AcquireResult blue = partition.acquire("b", BLUE, 10, 1 << 20);
        assertThat(blue.acquired()).containsExactly(new AcquiredBatch(1, 1, 1), new AcquiredBatch(3, 3, 1));

        AcquireResult any = partition.acquire("any", null, 10, 1 << 20);
        assertThat(any.acquired()).as("the record without a color, first delivery")
                .containsExactly(new AcquiredBatch(4, 4, 1));
    }

    @Test
    void shouldLeaveARecordNoMemberMatchesOnThePartitionForALaterMatchingMember() {
        log.appendColors("green");
        SharePartition partition = partition(ShareGroupConfig.defaults());

        assertThat(partition.acquire("r", RED, 10, 1 << 20).isEmpty()).isTrue();
        assertThat(partition.acquire("b", BLUE, 10, 1 << 20).isEmpty()).isTrue();
        assertThat(partition.startOffset()).isZero();

        AcquireResult green = partition.acquire("g", filter("color = 'green'"), 10, 1 << 20);
        assertThat(green.acquired()).containsExactly(new AcquiredBatch(0, 0, 1));
    }

    @Test
    void shouldScanPastNonMatchingBatchesAtTheHeadToReachAMatchingRecord() {
        for (int i = 0; i < 10; i++) {
            log.appendColors("blue", "blue", "blue");
        }
        log.appendColors("red");
        SharePartition partition = partition(ShareGroupConfig.defaults());

        // one byte per read: each read returns a single batch, so reaching offset 30 takes eleven reads
        AcquireResult red = partition.acquire("r", RED, 10, 1);

        assertThat(red.acquired()).containsExactly(new AcquiredBatch(30, 30, 1));
        assertThat(values(red)).containsExactly("v30");
        assertThat(partition.acquire("b", BLUE, 100, 1 << 20).recordCount()).isEqualTo(30);
    }

    @Test
    void shouldNotLookBeyondTheInFlightWindowUntilTheHeadMoves() {
        log.appendColors("blue", "blue", "blue", "blue", "red");
        SharePartition partition = partition(ShareGroupConfig.defaults().withMaxRecordLocks(4)
                .withSelectiveWindowRecords(4));

        assertThat(partition.acquire("r", RED, 10, 1 << 20).isEmpty())
                .as("offset 4 is past the selective window of 4 in-flight offsets from start offset 0").isTrue();

        AcquireResult head = partition.acquire("any", null, 1, 1 << 20);
        assertThat(head.acquired()).containsExactly(new AcquiredBatch(0, 0, 1));
        partition.acknowledge("any", List.of(ack(0, 0, AcknowledgeType.ACCEPT)));

        assertThat(partition.acquire("r", RED, 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(4, 4, 1));
    }

    @Test
    void shouldEvaluateJmsxDeliveryCountAsTheCountOfTheDeliveryToBe() {
        log.appendColors("red");
        SharePartition partition = partition(ShareGroupConfig.defaults());
        MemberFilter redelivered = filter("JMSXDeliveryCount > 1");

        assertThat(partition.acquire("x", redelivered, 10, 1 << 20).isEmpty()).isTrue();
        partition.acquire("any", null, 10, 1 << 20);
        partition.acknowledge("any", List.of(ack(0, 0, AcknowledgeType.RELEASE)));

        assertThat(partition.acquire("x", redelivered, 10, 1 << 20).acquired())
                .containsExactly(new AcquiredBatch(0, 0, 2));
    }

    @Test
    void shouldArchiveWhatASubscriptionSelectorDoesNotMatchWithoutDeliveringIt() {
        log.appendColors("blue", "red", "blue");
        SharePartition partition = partition(ShareGroupConfig.defaults());
        MemberFilter subscription = new MemberFilter(RED.selector(), true);

        assertThat(partition.acquire("s", subscription, 10, 1 << 20).acquired())
                .containsExactly(new AcquiredBatch(1, 1, 1));
        assertThat(partition.state(0)).contains(RecordState.ACKNOWLEDGED); // below the start offset: done
        assertThat(partition.startOffset()).isEqualTo(1);
        assertThat(partition.state(2)).contains(RecordState.ARCHIVED);
        assertThat(partition.deliveryCount(2)).isZero();
        assertThat(partition.acquire("any", null, 10, 1 << 20).isEmpty()).isTrue();
    }

    @Test
    void aSelectiveMemberFindsMatchesBehindMoreUnmatchedRecordsThanTheLockWindow() {
        String[] colors = new String[250];
        java.util.Arrays.fill(colors, "blue");
        colors[249] = "red";
        log.appendColors(colors);
        // a lock window of 100, a selective window of 1000: 249 blue records nobody takes stay at the head
        SharePartition partition = partition(ShareGroupConfig.defaults().withMaxRecordLocks(100)
                .withSelectiveWindowRecords(1000));

        AcquireResult red = partition.acquire("r", RED, 10, 1 << 20);

        assertThat(red.acquired()).containsExactly(new AcquiredBatch(249, 249, 1));
        assertThat(partition.startOffset()).isZero();
        assertThat(partition.state(0)).contains(RecordState.AVAILABLE);
        // a member without a selector takes the records in flight (the selective scan put them there)
        assertThat(partition.acquire("any", null, 1000, 1 << 20).acquired())
                .containsExactly(new AcquiredBatch(0, 248, 1));
    }

    @Test
    void theSelectiveWindowIsAtLeastTheLockWindow() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ShareGroupConfig.defaults()
                .withSelectiveWindowRecords(10)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("group.share.selective.window.records");
    }

    @Test
    void aSelectorsScanResumesPastWhatItFoundUnmatchedButSeesRecordsReleasedBelowIt() throws Exception {
        log.appendColors("red", "blue", "blue", "red");
        SharePartition partition = partition(ShareGroupConfig.defaults().withRedeliveryBackoff(1000, 1000));

        assertThat(partition.acquire("r", RED, 10, 1 << 20).acquired())
                .containsExactly(new AcquiredBatch(0, 0, 1), new AcquiredBatch(3, 3, 1));
        partition.acknowledge("r", List.of(ack(0, 0, AcknowledgeType.RELEASE)));
        // released with a backoff: a scan meanwhile finds nothing, and must not move past it
        assertThat(partition.acquire("r", RED, 10, 1 << 20).isEmpty()).isTrue();
        clock.advanceMs(1000);
        assertThat(partition.acquire("r", RED, 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 0, 2));
        log.appendColors("blue", "red");
        assertThat(partition.acquire("r", RED, 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(5, 5, 1));
        // the blue records were never taken and are still there for others
        assertThat(partition.acquire("b", BLUE, 10, 1 << 20).acquired())
                .containsExactly(new AcquiredBatch(1, 2, 1), new AcquiredBatch(4, 4, 1));
    }

    @Test
    void unmatchedRecordsScannedPastTakeNoEntriesAndSurviveARestoreAsAvailable() {
        String[] colors = new String[500];
        java.util.Arrays.fill(colors, "blue");
        colors[499] = "red";
        log.appendColors(colors);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        assertThat(partition.acquire("r", RED, 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(499, 499,
                1));

        SharePartitionSnapshot snapshot = partition.snapshot();
        assertThat(snapshot.endOffset()).isEqualTo(500);
        assertThat(snapshot.entries()).as("only the acquired record has an entry").hasSize(1);
        assertThat(partition.state(10)).contains(RecordState.AVAILABLE);

        SharePartition restored = partition(ShareGroupConfig.defaults());
        restored.restore(snapshot);
        assertThat(restored.acquire("b", BLUE, 1000, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 498,
                1));
        // the red one was acquired when saved: it comes back available, counted once
        assertThat(restored.acquire("r", RED, 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(499, 499,
                2));
    }

    @Test
    void aSelectiveResponseCarriesOnlyTheAcquiredRecordsAtTheirOwnOffsets() {
        log.appendColors("red", "blue", "blue", "red", "blue");
        log.appendColors("blue", "blue", "blue");
        log.appendColors("red", "red");
        SharePartition partition = partition(ShareGroupConfig.defaults());

        AcquireResult red = partition.acquire("r", RED, 10, 1 << 20);

        List<Long> offsets = new ArrayList<>();
        for (Record record : red.records().records()) {
            offsets.add(record.offset());
        }
        assertThat(offsets).as("no unmatched record crosses the network, the all-blue batch not at all")
                .containsExactly(0L, 3L, 8L, 9L);
        assertThat(values(red)).containsExactly("v0", "v3", "v8", "v9");
        red.records().batches().forEach(b -> assertThat(b.isValid()).as("CRC of batch at %d", b.baseOffset())
                .isTrue());
        assertThat(partition.acquire("b", BLUE, 10, 1 << 20).acquired())
                .containsExactly(new AcquiredBatch(1, 2, 1), new AcquiredBatch(4, 7, 1));
    }

    @Test
    void aSelectiveAcquisitionFillsItsBytesWithMatchesNotWithTheBatchesAroundThem() {
        appendRedEvery(25, 40, 10);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        int oneBatch = log.read(0, 1).sizeInBytes();

        // a fetch of one stored batch's bytes: whole batches would stop it after four matches
        AcquireResult red = partition.acquire("r", RED, 1000, oneBatch);

        assertThat(red.recordCount()).isGreaterThan(4);
        assertThat(red.records().sizeInBytes()).isLessThanOrEqualTo(oneBatch + oneBatch / 4);
    }

    @Test
    void aSelectiveScanOfAFileLogReadsItInChunksAndStillPassesABatchLargerThanAChunk(@TempDir Path dir)
            throws Exception {
        // the same records as the in-memory log's, in a file: blue ones, one record larger than a scan read, red ones
        log.appendColors("blue", "blue", "red");
        log.appendLarge("blue", SharePartition.SELECTIVE_READ_BYTES + 1000);
        for (int i = 0; i < 50; i++) {
            log.appendColors("blue", "red", "blue");
        }
        try (FileRecords file = FileRecords.open(dir.resolve("00.log").toFile())) {
            file.append((MemoryRecords) log.read(0, Integer.MAX_VALUE));
            ShareLog onFile = new FileShareLog(file, log::highWatermark);
            SharePartition partition = new SharePartition(KEY, onFile, ShareGroupConfig.defaults(), timer, clock,
                    listener, 0, lookahead());

            AcquireResult red = partition.acquire("r", RED, 1000, 1 << 20);
            AcquireResult more = partition.acquire("r", RED, 1000, 1 << 20);

            List<Long> offsets = new ArrayList<>();
            red.acquired().forEach(b -> offsets.add(b.firstOffset()));
            more.acquired().forEach(b -> offsets.add(b.firstOffset()));
            assertThat(offsets).as("every red one, past the large blue record").hasSize(51)
                    .contains(2L, 5L, 152L);
            assertThat(values(red)).startsWith("v2");
        }
    }
}
