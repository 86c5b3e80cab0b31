package dev.millrace.broker.log;

import java.io.BufferedWriter;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The {@code leader-epoch-checkpoint} file of a partition: the entries of its {@link LeaderEpochCache},
 * as text, written atomically (temp file {@code leader-epoch-checkpoint.tmp}, fsync, rename; a
 * leftover temp file is removed by {@link LogLoader}).
 *
 * <pre>
 *  0              &lt;- format version
 *  3              &lt;- number of entries that follow
 *  0 0            &lt;- epoch, space, start offset (decimal), one entry per line,
 *  2 1500            epochs and start offsets both strictly increasing
 *  5 98000
 * </pre>
 *
 * Reading checks all of that and fails with an {@link IOException} naming the file, the line and what
 * was wrong; the caller then rebuilds the cache from the log's batches.
 *
 * <p>Not thread-safe: the owning cache serializes writes.
 */
final class LeaderEpochCheckpointFile {

    static final int VERSION = 0;

    private final File file;

    LeaderEpochCheckpointFile(File file) {
        this.file = file;
    }

    File file() {
        return file;
    }

    void write(List<EpochEntry> entries) throws IOException {
        StringBuilder text = new StringBuilder().append(VERSION).append('\n').append(entries.size()).append('\n');
        for (EpochEntry entry : entries) {
            text.append(entry.epoch()).append(' ').append(entry.startOffset()).append('\n');
        }
        File tmp = new File(file.getPath() + ".tmp");
        try (FileOutputStream out = new FileOutputStream(tmp);
             BufferedWriter writer = new BufferedWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8))) {
            writer.write(text.toString());
            writer.flush();
            out.getFD().sync();
        }
        Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * @return the entries, or empty if the file does not exist
     * @throws IOException if the file cannot be read or is not in the format above
     */
    Optional<List<EpochEntry>> read() throws IOException {
        if (!file.exists()) {
            return Optional.empty();
        }
        List<String> lines = Files.readAllLines(file.toPath(), StandardCharsets.UTF_8);
        if (lines.isEmpty() || !lines.get(0).trim().equals(String.valueOf(VERSION))) {
            throw new IOException("Leader epoch checkpoint " + file + " line 1 must be the version " + VERSION
                    + ", found " + (lines.isEmpty() ? "an empty file" : "'" + lines.get(0) + "'"));
        }
        if (lines.size() < 2) {
            throw new IOException("Leader epoch checkpoint " + file + " ends before line 2 (the number of entries)");
        }
        int count = (int) parseNumber(lines.get(1).trim(), 1, "the number of entries", Integer.MAX_VALUE);
        if (lines.size() < 2 + count) {
            throw new IOException("Leader epoch checkpoint " + file + " announces " + count + " entries but holds "
                    + Math.max(0, lines.size() - 2) + " entry lines");
        }
        List<EpochEntry> entries = new ArrayList<>(count);
        for (int i = 2; i < 2 + count; i++) {
            String[] fields = lines.get(i).trim().split(" ");
            if (fields.length != 2) {
                throw new IOException("Leader epoch checkpoint " + file + " line " + (i + 1)
                        + " must be 'epoch startOffset', found '" + lines.get(i) + "'");
            }
            EpochEntry entry = new EpochEntry((int) parseNumber(fields[0], i, "an epoch", Integer.MAX_VALUE),
                    parseNumber(fields[1], i, "a start offset", Long.MAX_VALUE));
            EpochEntry previous = entries.isEmpty() ? null : entries.get(entries.size() - 1);
            if (previous != null
                    && (entry.epoch() <= previous.epoch() || entry.startOffset() <= previous.startOffset())) {
                throw new IOException("Leader epoch checkpoint " + file + " line " + (i + 1) + " holds " + entry
                        + ", expected an epoch and a start offset above those of the previous entry " + previous);
            }
            entries.add(entry);
        }
        return Optional.of(entries);
    }

    /** Parses a number from 0 to {@code max} on line {@code index + 1}. */
    private long parseNumber(String text, int index, String what, long max) throws IOException {
        try {
            long value = Long.parseLong(text);
            if (value < 0 || value > max) {
                throw new NumberFormatException("not between 0 and " + max);
            }
            return value;
        } catch (NumberFormatException e) {
            throw new IOException("Leader epoch checkpoint " + file + " line " + (index + 1) + " is not " + what
                    + ": '" + text + "'", e);
        }
    }
}
