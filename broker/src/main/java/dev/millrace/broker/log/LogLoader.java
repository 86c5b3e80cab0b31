package dev.millrace.broker.log;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;

import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens a partition directory and brings it to a consistent state.
 *
 * <ol>
 *   <li>Leftovers of interrupted work are settled: {@code .cleaned} and {@code .deleted} files and
 *       checkpoint temp files are removed; a {@code .swap} segment (a compaction that was being
 *       swapped in) replaces the segments whose offsets it covers.</li>
 *   <li>Every {@code .log} file is opened as a segment. A segment whose index files are missing or
 *       fail {@link AbstractIndex#sanityCheck} has them rebuilt from its batches.</li>
 *   <li>Without the {@code clean-shutdown} marker, every segment from the one holding the recovery
 *       point onwards is recovered ({@link LogSegment#recover}): batches are checked by magic, CRC
 *       and offsets, the indexes rebuilt, and the file truncated at the first bad batch; segments
 *       after a truncation are deleted, since their data no longer follows on.</li>
 * </ol>
 *
 * Not thread-safe: runs once, before the log is shared.
 */
final class LogLoader {

    private static final Logger log = LoggerFactory.getLogger(LogLoader.class);

    record LoadedLog(ConcurrentSkipListMap<Long, LogSegment> segments, long logStartOffset, long recoveryPoint,
                     LogOffsetMetadata logEnd) {
    }

    private LogLoader() {
    }

    static LoadedLog load(File dir, LogConfig config, Time time) throws IOException {
        Files.createDirectories(dir.toPath());
        File marker = new File(dir, LogFiles.CLEAN_SHUTDOWN);
        boolean cleanShutdown = marker.exists();
        removeLeftovers(dir);
        completeSwaps(dir);
        Files.deleteIfExists(marker.toPath());

        Set<Long> missingIndexes = new HashSet<>();
        ConcurrentSkipListMap<Long, LogSegment> segments = openSegments(dir, config, time, missingIndexes);
        OptionalLong checkpointedRecovery = readCheckpoint(new File(dir, LogFiles.RECOVERY_POINT_CHECKPOINT));
        OptionalLong checkpointedStart = readCheckpoint(new File(dir, LogFiles.LOG_START_OFFSET_CHECKPOINT));
        long recoveryPoint = checkpointedRecovery.orElse(0L);
        Long recoverFrom = segments.floorKey(recoveryPoint);
        if (cleanShutdown) {
            recoverFrom = Long.MAX_VALUE;
        } else if (!segments.isEmpty()) {
            log.info("Recovering {} after an unclean shutdown from offset {}", dir, recoverFrom == null ? 0 : recoverFrom);
        }
        checkAndRecover(segments, missingIndexes, recoverFrom == null ? Long.MIN_VALUE : recoverFrom,
                !config.compact());
        if (segments.isEmpty()) {
            long base = checkpointedStart.orElse(0L);
            segments.put(base, LogSegment.open(dir, base, config, time, false));
        }
        List<LogSegment> all = new ArrayList<>(segments.values());
        for (int i = 0; i < all.size() - 1; i++) {
            all.get(i).onBecomeInactive();
        }
        LogSegment active = all.get(all.size() - 1);
        active.onBecomeActive();
        long logEndOffset = active.readNextOffset();
        long logStartOffset = Math.min(Math.max(checkpointedStart.orElse(0L), segments.firstKey()), logEndOffset);
        long durable = cleanShutdown ? logEndOffset : Math.min(recoveryPoint, logEndOffset);
        return new LoadedLog(segments, logStartOffset, durable,
                new LogOffsetMetadata(logEndOffset, active.baseOffset(), active.size()));
    }

    /**
     * Walks the segments in order. A segment at or after {@code recoverFrom}, or one whose indexes are
     * missing or damaged, is recovered. If a segment had to be truncated, or it does not end where
     * the next one starts (a gap is legal only in compacted logs), the segments after it are deleted.
     */
    private static void checkAndRecover(ConcurrentSkipListMap<Long, LogSegment> segments, Set<Long> missingIndexes,
                                        long recoverFrom, boolean contiguous) throws IOException {
        List<LogSegment> all = new ArrayList<>(segments.values());
        for (int i = 0; i < all.size(); i++) {
            LogSegment segment = all.get(i);
            String reason = segment.baseOffset() >= recoverFrom ? null
                    : missingIndexes.contains(segment.baseOffset()) ? "index files are missing" : indexProblem(segment);
            int truncated = 0;
            if (segment.baseOffset() >= recoverFrom || reason != null) {
                if (reason != null) {
                    log.warn("Rebuilding the indexes of {}: {}", segment.file(), reason);
                }
                truncated = segment.recover(contiguous);
            }
            if (i + 1 == all.size()) {
                return;
            }
            long nextOffset = segment.readNextOffset();
            long nextBase = all.get(i + 1).baseOffset();
            String broken = truncated > 0 ? "recovery truncated " + truncated + " bytes of it"
                    : nextOffset > nextBase || contiguous && nextOffset != nextBase
                    ? "it ends at offset " + nextOffset + " but the next segment starts at " + nextBase : null;
            if (broken != null) {
                log.warn("Deleting the segments after {}: {}", segment.file(), broken);
                for (LogSegment later : all.subList(i + 1, all.size())) {
                    segments.remove(later.baseOffset());
                    later.closeAndDelete();
                }
                return;
            }
        }
    }

    /** Why the segment's indexes cannot be used as they are, or null if they can. */
    private static String indexProblem(LogSegment segment) {
        try {
            segment.sanityCheckIndexes();
            return null;
        } catch (CorruptIndexException e) {
            return e.getMessage();
        }
    }

    private static ConcurrentSkipListMap<Long, LogSegment> openSegments(File dir, LogConfig config, Time time,
                                                                        Set<Long> missingIndexes) throws IOException {
        TreeMap<Long, File> logFiles = new TreeMap<>();
        for (File file : listFiles(dir)) {
            if (file.getName().endsWith(LogFiles.LOG_SUFFIX)) {
                logFiles.put(LogFiles.offsetFromFileName(file.getName()), file);
            }
        }
        ConcurrentSkipListMap<Long, LogSegment> segments = new ConcurrentSkipListMap<>();
        for (long base : logFiles.keySet()) {
            if (!LogFiles.offsetIndexFile(dir, base).exists() || !LogFiles.timeIndexFile(dir, base).exists()) {
                missingIndexes.add(base);
            }
            segments.put(base, LogSegment.open(dir, base, config, time, true));
        }
        return segments;
    }

    private static void removeLeftovers(File dir) throws IOException {
        for (File file : listFiles(dir)) {
            String name = file.getName();
            if (name.endsWith(LogFiles.CLEANED_SUFFIX) || name.endsWith(LogFiles.DELETED_SUFFIX)
                    || name.endsWith(".tmp")) {
                log.info("Removing leftover file {}", file);
                Files.deleteIfExists(file.toPath());
            }
        }
    }

    /** Finishes a compaction swap: the {@code .swap} segment replaces every segment inside its offset range. */
    private static void completeSwaps(File dir) throws IOException {
        for (File swap : listFiles(dir)) {
            if (!swap.getName().endsWith(LogFiles.LOG_SUFFIX + LogFiles.SWAP_SUFFIX)) {
                continue;
            }
            long base = LogFiles.offsetFromFileName(swap.getName());
            long last = base - 1;
            FileRecords records = FileRecords.open(swap, true, false, 0, false);
            try {
                for (FileChannelRecordBatch batch : records.batches()) {
                    last = batch.lastOffset();
                }
            } finally {
                records.channel().close();
            }
            for (File file : listFiles(dir)) {
                String name = file.getName();
                if (name.endsWith(LogFiles.SWAP_SUFFIX) || !Character.isDigit(name.charAt(0))) {
                    continue;
                }
                long offset = LogFiles.offsetFromFileName(name);
                boolean segmentFile = name.endsWith(LogFiles.LOG_SUFFIX) || name.endsWith(LogFiles.INDEX_SUFFIX)
                        || name.endsWith(LogFiles.TIME_INDEX_SUFFIX) || name.endsWith(LogFiles.TXN_INDEX_SUFFIX);
                if (segmentFile && offset >= base && offset <= Math.max(base, last)) {
                    log.info("Deleting {}: replaced by compacted segment {}", file, swap);
                    Files.delete(file.toPath());
                }
            }
            for (String suffix : List.of(LogFiles.LOG_SUFFIX, LogFiles.INDEX_SUFFIX, LogFiles.TIME_INDEX_SUFFIX,
                    LogFiles.TXN_INDEX_SUFFIX)) {
                File swapped = new File(dir, LogFiles.filenamePrefix(base) + suffix + LogFiles.SWAP_SUFFIX);
                if (swapped.exists()) {
                    Files.move(swapped.toPath(), LogFiles.withSuffix(swapped, LogFiles.SWAP_SUFFIX, "").toPath());
                }
            }
        }
    }

    private static OptionalLong readCheckpoint(File file) {
        try {
            return new OffsetCheckpointFile(file).read();
        } catch (IOException e) {
            log.warn("Ignoring unreadable checkpoint: {}", e.getMessage());
            return OptionalLong.empty();
        }
    }

    private static File[] listFiles(File dir) throws IOException {
        File[] files = dir.listFiles();
        if (files == null) {
            throw new IOException("Cannot list " + dir);
        }
        return files;
    }
}
