package dev.millrace.broker.log;

import java.io.File;

/**
 * Names of the files in a partition's directory. The directory of partition {@code p} of topic
 * {@code t} is {@code <log.dir>/t-p}:
 *
 * <pre>
 *  <log.dir>/orders-0/
 *    00000000000000000000.log          segment: RecordBatch v2 batches back to back
 *    00000000000000000000.index        offset index      (see OffsetIndex)
 *    00000000000000000000.timeindex    time index        (see TimeIndex)
 *    00000000000000052119.log/.index/.timeindex          next segment, named by its base offset
 *    recovery-point.checkpoint         everything below this offset was fsynced (OffsetCheckpointFile)
 *    log-start-offset.checkpoint       first offset readers may ask for     (OffsetCheckpointFile)
 *    clean-shutdown                    present only from a clean close to the next open
 *    leader-epoch-checkpoint           first offset of each leader epoch (LeaderEpochCache, LeaderEpochCheckpointFile)
 *    00000000000000052119.snapshot     producer state as of that offset (ProducerStateSnapshotFile)
 *    00000000000000052119.txnindex     aborted transactions with their marker in that segment (TransactionIndex)
 *    *.deleted                         segment files waiting file.delete.delay.ms before removal (SegmentDeleter)
 *    *.tmp                             a checkpoint being written (temp file, fsync, rename); removed at open
 *    *.cleaned, *.swap                 compaction output being written / being swapped in (LogCleaner)
 * </pre>
 *
 * Offsets in file names are zero-padded to 20 digits so that names sort as offsets do.
 */
public final class LogFiles {

    public static final String LOG_SUFFIX = ".log";
    public static final String INDEX_SUFFIX = ".index";
    public static final String TIME_INDEX_SUFFIX = ".timeindex";
    public static final String SNAPSHOT_SUFFIX = ".snapshot";
    public static final String TXN_INDEX_SUFFIX = ".txnindex";
    public static final String DELETED_SUFFIX = ".deleted";
    public static final String CLEANED_SUFFIX = ".cleaned";
    public static final String SWAP_SUFFIX = ".swap";
    public static final String RECOVERY_POINT_CHECKPOINT = "recovery-point.checkpoint";
    public static final String LOG_START_OFFSET_CHECKPOINT = "log-start-offset.checkpoint";
    public static final String LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint";
    public static final String CLEAN_SHUTDOWN = "clean-shutdown";

    private LogFiles() {
    }

    public static String filenamePrefix(long offset) {
        return String.format("%020d", offset);
    }

    static File logFile(File dir, long baseOffset) {
        return new File(dir, filenamePrefix(baseOffset) + LOG_SUFFIX);
    }

    static File offsetIndexFile(File dir, long baseOffset) {
        return new File(dir, filenamePrefix(baseOffset) + INDEX_SUFFIX);
    }

    static File timeIndexFile(File dir, long baseOffset) {
        return new File(dir, filenamePrefix(baseOffset) + TIME_INDEX_SUFFIX);
    }

    static File txnIndexFile(File dir, long baseOffset) {
        return new File(dir, filenamePrefix(baseOffset) + TXN_INDEX_SUFFIX);
    }

    /** The base offset in a file name such as {@code 00000000000000000042.log.swap}. */
    static long offsetFromFileName(String name) {
        return Long.parseLong(name.substring(0, name.indexOf('.')));
    }

    static File withSuffix(File file, String oldSuffix, String newSuffix) {
        String name = file.getName();
        String stem = oldSuffix.isEmpty() ? name : name.substring(0, name.length() - oldSuffix.length());
        if (!oldSuffix.isEmpty() && !name.endsWith(oldSuffix)) {
            throw new IllegalArgumentException("File " + file + " does not end with " + oldSuffix);
        }
        return new File(file.getParentFile(), stem + newSuffix);
    }
}
