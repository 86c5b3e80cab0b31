package dev.millrace.broker.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The snapshot file format: round trip, and every kind of damage is refused. */
@Timeout(20)
class ProducerStateSnapshotFileTest {

    @TempDir
    Path tmp;

    static TreeSet<Long> snapshotOffsets(File dir) throws IOException {
        return new ProducerStateManager(dir).snapshotOffsets();
    }

    private static List<ProducerStateEntry> twoProducers() {
        ProducerStateEntry first = new ProducerStateEntry(7L, (short) 3);
        for (int i = 0; i < 7; i++) {
            first.add((short) 3, new ProducerStateEntry.BatchMetadata(i * 2, i * 2 + 1, 100L + i * 2, 101L + i * 2,
                    5_000L + i));
        }
        ProducerStateEntry second = new ProducerStateEntry(Long.MAX_VALUE, Short.MAX_VALUE);
        second.currentTxnFirstOffset(299L);
        second.add(Short.MAX_VALUE, new ProducerStateEntry.BatchMetadata(Integer.MAX_VALUE, 0, 300L, 301L, -1L));
        return List.of(first, second);
    }

    private File written() throws IOException {
        File file = ProducerStateSnapshotFile.file(tmp.toFile(), 400L);
        ProducerStateSnapshotFile.write(file, 400L, twoProducers());
        return file;
    }

    @Test
    void shouldReadBackWhatItWrote() throws IOException {
        File file = written();
        assertThat(file.getName()).isEqualTo("00000000000000000400.snapshot");
        assertThat(file.length()).isEqualTo(18 + 2 * 22 + 6 * 32);
        List<ProducerStateEntry> read = ProducerStateSnapshotFile.read(file, 400L);
        assertThat(read).hasSize(2);
        assertThat(read.get(0).producerId()).isEqualTo(7L);
        assertThat(read.get(0).producerEpoch()).isEqualTo((short) 3);
        assertThat(read.get(0).batches()).containsExactlyElementsOf(twoProducers().get(0).batches());
        assertThat(read.get(1).batches()).containsExactlyElementsOf(twoProducers().get(1).batches());
        assertThat(read.get(0).currentTxnFirstOffset()).as("no open transaction").isEqualTo(-1L);
        assertThat(read.get(1).currentTxnFirstOffset()).as("open transaction's first offset").isEqualTo(299L);
        assertThat(new File(file.getPath() + ".tmp")).doesNotExist();
    }

    @Test
    void shouldWriteAndReadAnEmptyState() throws IOException {
        File file = ProducerStateSnapshotFile.file(tmp.toFile(), 0L);
        ProducerStateSnapshotFile.write(file, 0L, List.of());
        assertThat(ProducerStateSnapshotFile.read(file, 0L)).isEmpty();
    }

    @Test
    void shouldRefuseAFlippedByte() throws IOException {
        File file = written();
        try (RandomAccessFile raf = new RandomAccessFile(file, "rw")) {
            raf.seek(40);
            int b = raf.read();
            raf.seek(40);
            raf.write(b ^ 0x10);
        }
        assertThatThrownBy(() -> ProducerStateSnapshotFile.read(file, 400L))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("CRC");
    }

    @Test
    void shouldRefuseATruncatedFile() throws IOException {
        File file = written();
        try (RandomAccessFile raf = new RandomAccessFile(file, "rw")) {
            raf.setLength(10);
        }
        assertThatThrownBy(() -> ProducerStateSnapshotFile.read(file, 400L))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("header");
    }

    @Test
    void shouldRefuseAnUnknownVersion() throws IOException {
        File file = written();
        try (RandomAccessFile raf = new RandomAccessFile(file, "rw")) {
            raf.writeShort(9);
        }
        assertThatThrownBy(() -> ProducerStateSnapshotFile.read(file, 400L))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("version 9");
    }

    @Test
    void shouldRefuseASnapshotWhoseOffsetDoesNotMatchItsName() throws IOException {
        File file = written();
        assertThatThrownBy(() -> ProducerStateSnapshotFile.read(file, 401L))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("expected 401");
    }
}
