package dev.millrace.broker.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactions in one partition's log: open transactions hold back the first unstable offset,
 * markers close them, aborts are indexed per segment and survive restarts (clean and unclean),
 * only coordinators may write markers, markers of a newer epoch fence older ones, reads can be
 * bounded by the last stable offset, and compaction drops aborted data but keeps markers.
 */
@Timeout(60)
class TransactionalLogTest {

    private static final long A = 11L;
    private static final long B = 22L;

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

    private PartitionLog open(Map<String, String> config) throws IOException {
        log = PartitionLog.open(tmp.resolve("t-0").toFile(), new LogConfig(config), time, Scheduler.IMMEDIATE);
        return log;
    }

    static MemoryRecords transactional(long producerId, int epoch, int sequence, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(1_000L + i, TestBatches.bytes("k-" + values[i]), TestBatches.bytes(values[i]));
        }
        return MemoryRecords.withTransactionalRecords(Compression.NONE, producerId, (short) epoch, sequence, records);
    }

    static MemoryRecords marker(long producerId, int epoch, boolean commit) {
        return MemoryRecords.withEndTransactionMarker(1_000L, producerId, (short) epoch,
                new EndTransactionMarker(commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT, 0));
    }

    private void coordinator(MemoryRecords records) {
        log.appendAsLeader(records, 0, AppendOrigin.COORDINATOR);
    }

    @Test
    void abortedTransactionsAreFoundForANarrowWindowWhenAnEarlierStartedOneEndsFirst() throws IOException {
        open(Map.of());
        log.appendAsLeader(transactional(A, 0, 0, "a1"), 0);                // 0   A opens (ends last)
        log.appendAsLeader(transactional(B, 0, 0, "b1", "b2", "b3"), 0);    // 1-3 B opens
        coordinator(marker(A, 0, false));                                   // 4   A aborted; B still open
        coordinator(marker(B, 0, false));                                   // 5   B aborted
        // a window holding only B's batch: A's entry comes first and its marker is past the window, but B's
        // must still be found
        List<AbortedTxn> found = log.collectAbortedTransactions(1, 4);
        assertThat(found).extracting(AbortedTxn::producerId).containsExactly(A, B);
        RecordBatch bBatch = log.read(1, 1 << 20, true).records().batches().iterator().next();
        assertThat(bBatch.producerId()).isEqualTo(B);
        assertThat(AbortedTxn.anyCovers(found, bBatch)).isTrue();
    }

    @Test
    void openTransactionsHoldBackTheFirstUnstableOffsetUntilTheirMarkers() throws IOException {
        open(Map.of());
        log.appendAsLeader(TestBatches.batch(2, 5L), 0);                    // 0-1 plain
        assertThat(log.firstUnstableOffset()).isEqualTo(-1);
        log.appendAsLeader(transactional(A, 0, 0, "a1", "a2"), 0);          // 2-3 A opens
        log.appendAsLeader(transactional(B, 0, 0, "b1"), 0);                // 4   B opens
        log.appendAsLeader(transactional(A, 0, 2, "a3"), 0);                // 5   A continues
        assertThat(log.firstUnstableOffset()).isEqualTo(2);
        coordinator(marker(A, 0, true));                                    // 6   A commits
        assertThat(log.firstUnstableOffset()).as("B is still open").isEqualTo(4);
        coordinator(marker(B, 0, false));                                   // 7   B aborts
        assertThat(log.firstUnstableOffset()).isEqualTo(-1);
        assertThat(log.collectAbortedTransactions(0, log.logEndOffset()))
                .containsExactly(new AbortedTxn(B, 4, 7, 8));
        assertThat(log.collectAbortedTransactions(8, log.logEndOffset())).as("fetch after the marker").isEmpty();
        assertThat(log.collectAbortedTransactions(0, 4)).as("range ends before B began").isEmpty();

        log.appendAsLeader(transactional(A, 0, 3, "a4"), 0);                // 8   A opens its next transaction
        assertThat(log.firstUnstableOffset()).isEqualTo(8);
    }

    @Test
    void aBoundedReadReturnsOnlyWholeBatchesBelowTheBound() throws IOException {
        open(Map.of());
        log.appendAsLeader(TestBatches.batch(3, 5L), 0);                    // 0-2
        log.appendAsLeader(transactional(A, 0, 0, "a1", "a2"), 0);          // 3-4
        log.appendAsLeader(TestBatches.batch(1, 5L), 0);                    // 5
        assertThat(TestBatches.records(log.read(0, 1 << 20, true, log.firstUnstableOffset()).records()))
                .extracting(TestBatches.Read::offset).containsExactly(0L, 1L, 2L);
        assertThat(log.read(3, 1 << 20, true, 3).records().sizeInBytes()).isZero();
        coordinator(marker(A, 0, true));
        assertThat(TestBatches.records(log.read(0, 1 << 20, true, log.logEndOffset()).records())).hasSize(7);
    }

    @Test
    void clientsMayNotWriteMarkersAndNewerMarkerEpochsFenceOlderProducers() throws IOException {
        open(Map.of());
        log.appendAsLeader(transactional(A, 3, 0, "a1"), 0);
        assertThatThrownBy(() -> log.appendAsLeader(marker(A, 3, true), 0))
                .isInstanceOf(InvalidRecordException.class).hasMessageContaining("only transaction coordinators");
        assertThat(log.firstUnstableOffset()).as("the client's marker changed nothing").isEqualTo(0);

        coordinator(marker(A, 4, false));                                   // a fencing abort with a bumped epoch
        assertThatThrownBy(() -> log.appendAsLeader(transactional(A, 3, 1, "zombie"), 0))
                .isInstanceOf(InvalidProducerEpochException.class).hasMessageContaining("fenced");
        assertThatThrownBy(() -> coordinator(marker(A, 3, true)))
                .isInstanceOf(InvalidProducerEpochException.class);
        long end = log.logEndOffset();
        log.appendAsLeader(transactional(A, 5, 0, "successor"), 0);
        assertThat(log.logEndOffset()).isEqualTo(end + 1);
    }

    @Test
    void openTransactionsAndAbortsSurviveACleanRestart() throws IOException {
        open(Map.of());
        log.appendAsLeader(transactional(A, 0, 0, "a1"), 0);                // 0
        coordinator(marker(A, 0, false));                                   // 1
        log.appendAsLeader(transactional(B, 0, 0, "b1"), 0);                // 2 open
        log.close();
        open(Map.of());
        assertThat(log.firstUnstableOffset()).isEqualTo(2);
        assertThat(log.collectAbortedTransactions(0, 3)).containsExactly(new AbortedTxn(A, 0, 1, 2));
        coordinator(marker(B, 0, true));
        assertThat(log.firstUnstableOffset()).isEqualTo(-1);
    }

    @Test
    void anUncleanStopRebuildsOpenTransactionsAndLostIndexEntriesFromTheLog() throws IOException {
        open(Map.of());
        log.appendAsLeader(transactional(A, 0, 0, "a1"), 0);                // 0
        coordinator(marker(A, 0, false));                                   // 1
        log.appendAsLeader(transactional(B, 0, 0, "b1"), 0);                // 2 open
        File txnIndex = new File(log.dir(), LogFiles.filenamePrefix(0) + LogFiles.TXN_INDEX_SUFFIX);
        assertThat(txnIndex).hasSize(TransactionIndex.ENTRY_BYTES);
        log.closeAsIfCrashed();
        log = null;
        try (RandomAccessFile file = new RandomAccessFile(txnIndex, "rw")) {
            file.setLength(0);                                              // the entry was never flushed
        }
        open(Map.of());
        assertThat(log.firstUnstableOffset()).isEqualTo(2);
        assertThat(log.collectAbortedTransactions(0, 3)).containsExactly(new AbortedTxn(A, 0, 1, 2));
        assertThat(txnIndex).as("re-added on replay").hasSize(TransactionIndex.ENTRY_BYTES);
    }

    @Test
    void indexEntriesBeyondATruncatedTailAndTornEntriesAreDropped() throws IOException {
        open(Map.of());
        log.appendAsLeader(transactional(A, 0, 0, "a1"), 0);                // 0
        coordinator(marker(A, 0, false));                                   // 1
        log.appendAsLeader(transactional(B, 0, 0, "b1"), 0);                // 2
        coordinator(marker(B, 0, false));                                   // 3
        File segment = new File(log.dir(), LogFiles.filenamePrefix(0) + LogFiles.LOG_SUFFIX);
        File txnIndex = new File(log.dir(), LogFiles.filenamePrefix(0) + LogFiles.TXN_INDEX_SUFFIX);
        log.closeAsIfCrashed();
        log = null;
        // cut the log in the middle of B's marker batch: B's data stays, its marker is gone
        long size = segment.length();
        try (RandomAccessFile file = new RandomAccessFile(segment, "rw")) {
            file.setLength(size - 5);
        }
        try (RandomAccessFile file = new RandomAccessFile(txnIndex, "rw")) {
            file.setLength(file.length() + 7);                              // and a torn entry after both
        }
        open(Map.of());
        assertThat(log.logEndOffset()).isEqualTo(3);
        assertThat(log.firstUnstableOffset()).as("B is open again").isEqualTo(2);
        assertThat(log.collectAbortedTransactions(0, 3)).containsExactly(new AbortedTxn(A, 0, 1, 2));
        assertThat(txnIndex).hasSize(TransactionIndex.ENTRY_BYTES);
    }

    @Test
    void compactionDropsAbortedDataKeepsMarkersAndLeavesOpenTransactionsAlone() throws IOException {
        open(Map.of(LogConfig.CLEANUP_POLICY, "compact", LogConfig.SEGMENT_BYTES, "1024",
                LogConfig.FILE_DELETE_DELAY_MS, "0"));
        log.appendAsLeader(TestBatches.keyed("k-x", "committed-x", 5L), 0); // 0
        log.appendAsLeader(transactional(A, 0, 0, "x"), 0);                 // 1 key k-x, aborted below
        log.appendAsLeader(TestBatches.keyed("other", "o", 5L), 0);         // 2
        coordinator(marker(A, 0, false));                                   // 3 abort A
        log.roll();
        log.appendAsLeader(transactional(B, 0, 0, "y"), 0);                 // 4 B open
        log.appendAsLeader(TestBatches.keyed("other", "newer", 5L), 0);     // 5
        log.appendAsLeader(TestBatches.keyed("k-y", "plain-y", 5L), 0);     // 6 same key as B's open record
        log.roll();
        new LogCleaner().clean(log);

        List<TestBatches.Read> all = TestBatches.readAll(log, 0, 1 << 20);
        assertThat(all).extracting(TestBatches.Read::offset)
                .as("aborted data at 1 dropped without hiding the committed value at 0; the marker at 3 and the "
                        + "segment holding B's open transaction kept")
                .containsExactly(0L, 2L, 3L, 4L, 5L, 6L);
        assertThat(all.get(0).value()).isEqualTo("committed-x");
        assertThat(log.firstUnstableOffset()).isEqualTo(4);
        assertThat(log.collectAbortedTransactions(0, log.logEndOffset())).containsExactly(new AbortedTxn(A, 1, 3, 4));
    }

    @Test
    void aVerifiedBatchThatWouldOpenATransactionIsRefusedOnceAMarkerOfItsProducerWasWrittenSinceTheVerification()
            throws IOException {
        open(Map.of());
        log.appendAsLeader(transactional(A, 0, 0, "a1"), 0);
        TxnVerification late = log.startTxnVerification(A, (short) 0);
        assertThat(late.needed()).as("A's transaction is open here: no need to ask the coordinator").isFalse();
        coordinator(marker(A, 0, false));                                   // 1: the client gave up and aborted
        TxnVerification next = log.startTxnVerification(A, (short) 0);
        assertThat(next.needed()).as("a batch now opens a transaction").isTrue();
        assertThat(next.guard()).as("the marker dropped the old guard").isNotSameAs(late.guard());

        assertThatThrownBy(() -> log.appendAsLeader(transactional(A, 0, 1, "a2-late"), 0, AppendOrigin.CLIENT,
                late.guard())).isInstanceOf(InvalidTxnStateException.class).hasMessageContaining("producer 11")
                .hasMessageContaining("late for its transaction");
        assertThat(log.logEndOffset()).isEqualTo(2);
        assertThat(log.firstUnstableOffset()).as("no transaction left open").isEqualTo(-1);

        TxnVerification raced = log.startTxnVerification(A, (short) 0);    // verified, then a marker lands
        coordinator(marker(A, 0, false));                                   // 2
        assertThatThrownBy(() -> log.appendAsLeader(transactional(A, 0, 1, "a2-raced"), 0, AppendOrigin.CLIENT,
                raced.guard())).isInstanceOf(InvalidTxnStateException.class);

        TxnVerification fresh = log.startTxnVerification(A, (short) 0);
        log.appendAsLeader(transactional(A, 0, 1, "a2"), 0, AppendOrigin.CLIENT, fresh.guard());   // 3 opens
        assertThat(log.firstUnstableOffset()).isEqualTo(3);
        TxnVerification within = log.startTxnVerification(A, (short) 0);
        assertThat(within.needed()).isFalse();
        log.appendAsLeader(transactional(A, 0, 2, "a3"), 0, AppendOrigin.CLIENT, within.guard());  // 4 joins
        log.appendAsLeader(transactional(B, 0, 0, "b1"), 0);                // 5: unchecked append (no guard)
        coordinator(marker(A, 0, true));
        coordinator(marker(B, 0, true));
        assertThat(log.firstUnstableOffset()).isEqualTo(-1);
        assertThat(log.logEndOffset()).isEqualTo(8);

        TxnVerification offsets = log.startTxnVerification(B, (short) 0);  // a TxnOffsetCommit being verified
        coordinator(marker(B, 0, false));                                   // 8: its transaction aborted meanwhile
        assertThatThrownBy(() -> log.appendAsLeader(transactional(B, 0, 0, "offset-late"), 0,
                AppendOrigin.COORDINATOR, offsets.guard())).isInstanceOf(InvalidTxnStateException.class);
        assertThat(log.firstUnstableOffset()).isEqualTo(-1);
    }
}
