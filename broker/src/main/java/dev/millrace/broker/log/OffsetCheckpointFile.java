package dev.millrace.broker.log;

import java.io.BufferedWriter;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.OptionalLong;

/**
 * A file holding one offset, written atomically (temp file, fsync, rename).
 *
 * <pre>
 *  0            &lt;- format version
 *  12345        &lt;- the offset, decimal
 * </pre>
 *
 * A file that is missing, unreadable or not in this format reads as empty, with the reason logged
 * by the caller: every checkpoint here is an optimisation over a safe default (recover from the
 * start, start at the first segment).
 */
public final class OffsetCheckpointFile {

    static final int VERSION = 0;

    private final File file;

    public OffsetCheckpointFile(File file) {
        this.file = file;
    }

    public void write(long offset) throws IOException {
        File tmp = new File(file.getPath() + ".tmp");
        try (FileOutputStream out = new FileOutputStream(tmp);
             BufferedWriter writer = new BufferedWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8))) {
            writer.write(VERSION + "\n" + offset + "\n");
            writer.flush();
            out.getFD().sync();
        }
        Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * @return the offset, or empty if the file is missing
     * @throws IOException if the file exists but is not a valid checkpoint; the message names the file and line
     */
    public OptionalLong read() throws IOException {
        if (!file.exists()) {
            return OptionalLong.empty();
        }
        List<String> lines = Files.readAllLines(file.toPath(), StandardCharsets.UTF_8);
        if (lines.size() < 2 || !lines.get(0).trim().equals(String.valueOf(VERSION))) {
            throw new IOException("Checkpoint " + file + " must hold version " + VERSION + " then an offset, found "
                    + lines);
        }
        try {
            long offset = Long.parseLong(lines.get(1).trim());
            if (offset < 0) {
                throw new IOException("Checkpoint " + file + " holds negative offset " + offset);
            }
            return OptionalLong.of(offset);
        } catch (NumberFormatException e) {
            throw new IOException("Checkpoint " + file + " line 2 is not an offset: '" + lines.get(1) + "'", e);
        }
    }

    File file() {
        return file;
    }
}
