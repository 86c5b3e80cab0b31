package dev.millrace.bench.log;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.stream.Stream;

import dev.millrace.broker.log.PartitionLog;

/**
 * Temporary directories for benchmark logs and files, under {@code java.io.tmpdir}, and their
 * removal, so that gigabytes written per iteration do not pile up on disk.
 */
final class BenchDirs {

    private BenchDirs() {
    }

    static Path create(String prefix) {
        try {
            return Files.createTempDirectory("millrace-bench-" + prefix + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Closes a log whose contents are no longer wanted and deletes its directory. The segment files
     * are truncated to zero first: close fsyncs, and without this it would write out to disk the
     * gigabytes a no-fsync run leaves dirty in the page cache, only for them to be deleted.
     */
    static void discard(PartitionLog log) {
        try {
            File[] files = log.dir().listFiles((dir, name) -> name.endsWith(".log"));
            for (File file : files == null ? new File[0] : files) {
                try (FileChannel channel = FileChannel.open(file.toPath(), StandardOpenOption.WRITE)) {
                    channel.truncate(0);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            try {
                log.close();
            } finally {
                delete(log.dir().toPath());
            }
        }
    }

    /** Deletes {@code dir} and everything under it; a missing directory is fine. */
    static void delete(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
