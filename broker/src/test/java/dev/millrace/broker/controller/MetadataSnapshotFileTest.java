package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.controller.MetadataRecord.BrokerRegistrationRecord;
import dev.millrace.broker.controller.MetadataRecord.BrokerStateRecord;
import dev.millrace.broker.controller.MetadataRecord.ClusterIdRecord;
import dev.millrace.broker.controller.MetadataRecord.ConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.GroupConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.PartitionRecord;
import dev.millrace.broker.controller.MetadataRecord.ProducerIdsRecord;
import dev.millrace.broker.controller.MetadataRecord.TopicRecord;

class MetadataSnapshotFileTest {

    @TempDir
    Path dir;

    private static MetadataImage sampleImage() {
        Uuid a = Uuid.randomUuid();
        Uuid b = Uuid.randomUuid();
        MetadataImageBuilder builder = new MetadataImageBuilder(MetadataImage.EMPTY);
        List.<MetadataRecord>of(
                new TopicRecord("a", a),
                new ConfigRecord("a", "retention.ms", "60000"),
                new PartitionRecord(a, 0, List.of(1, 2), List.of(1, 2), 1, 0, 0),
                new PartitionRecord(a, 1, List.of(2, 1), List.of(2), 2, 3, 5),
                new PartitionRecord(a, 2, List.of(3, 1), List.of(1), 1, 0, 1, List.of(3), List.of(1)),
                new TopicRecord("b", b),
                new PartitionRecord(b, 0, List.of(1), List.of(1), 1, 0, 0),
                new ClusterIdRecord("cluster"),
                new BrokerRegistrationRecord(2, b, 30, "127.0.0.1", 9002, null),
                new BrokerRegistrationRecord(1, a, 40, "127.0.0.1", 9001, "r1"),
                new BrokerStateRecord(1, 40, BrokerState.UNFENCED),
                new BrokerRegistrationRecord(3, a, 41, "127.0.0.1", 9003, "r2"),
                new BrokerStateRecord(3, 41, BrokerState.CONTROLLED_SHUTDOWN),
                new GroupConfigRecord("queue", "share.delivery.count.limit", "3"),
                new GroupConfigRecord("queue", "share.auto.offset.reset", "earliest"),
                new GroupConfigRecord("gone", "share.auto.offset.reset", "earliest"),
                new GroupConfigRecord("gone", "share.auto.offset.reset", null)).forEach(builder::replay);
        return builder.build(42);
    }

    @Test
    @Timeout(10)
    void shouldReadBackTheSameImageWhenWritten() throws Exception {
        MetadataImage image = sampleImage();

        Path file = MetadataSnapshotFile.write(dir, image);

        assertThat(file.getFileName().toString()).isEqualTo(MetadataSnapshotFile.FILE_NAME);
        assertThat(MetadataSnapshotFile.read(file)).isEqualTo(image);
        assertThat(image.groupConfigs()).containsOnlyKeys("queue");
        assertThat(MetadataSnapshotFile.read(file).groupConfigs("queue")).containsExactly(
                Map.entry("share.auto.offset.reset", "earliest"), Map.entry("share.delivery.count.limit", "3"));
    }

    @Test
    @Timeout(10)
    void shouldRoundTripAnEmptyImage() throws Exception {
        MetadataImage empty = new MetadataImage(7, Map.of());

        assertThat(MetadataSnapshotFile.read(MetadataSnapshotFile.write(dir, empty))).isEqualTo(empty);
    }

    @Test
    @Timeout(10)
    void shouldNameFileAndChecksumsWhenAByteIsFlipped() throws Exception {
        Path file = MetadataSnapshotFile.write(dir, sampleImage());
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.seek(30);
            int b = raf.read();
            raf.seek(30);
            raf.write(b ^ 0x01);
        }

        assertThatThrownBy(() -> MetadataSnapshotFile.read(file))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("CRC-32C");
    }

    @Test
    @Timeout(10)
    void shouldRejectUnknownVersionAndMagic() throws Exception {
        Path file = MetadataSnapshotFile.write(dir, sampleImage());
        byte[] bytes = Files.readAllBytes(file);
        bytes[5] = 9;
        Files.write(file, bytes);

        assertThatThrownBy(() -> MetadataSnapshotFile.read(file)).hasMessageContaining("unsupported version 9");

        bytes[0] = 0;
        Files.write(file, bytes);
        assertThatThrownBy(() -> MetadataSnapshotFile.read(file)).hasMessageContaining("magic");
    }

    @Test
    @Timeout(10)
    void shouldRejectTruncatedFile() throws Exception {
        Path file = MetadataSnapshotFile.write(dir, sampleImage());
        byte[] bytes = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(bytes, bytes.length - 1));

        assertThatThrownBy(() -> MetadataSnapshotFile.read(file))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("batch length");
    }

    @Test
    @Timeout(10)
    void shouldKeepTheNextProducerIdWhenWrittenAndRead() throws Exception {
        MetadataImageBuilder builder = new MetadataImageBuilder(sampleImage());
        builder.replay(new ProducerIdsRecord(1, 1000));
        builder.replay(new ProducerIdsRecord(2, 2000));
        MetadataImage image = builder.build(43);

        MetadataImage read = MetadataSnapshotFile.read(MetadataSnapshotFile.write(dir, image));

        assertThat(read).isEqualTo(image);
        assertThat(read.nextProducerId()).isEqualTo(2000);
        assertThat(MetadataSnapshotFile.toRecords(image)).filteredOn(ProducerIdsRecord.class::isInstance)
                .containsExactly(new ProducerIdsRecord(-1, 2000));
    }

    @Test
    @Timeout(10)
    void shouldWriteNoProducerIdsRecordWhenNoIdWasAllocated() {
        assertThat(sampleImage().nextProducerId()).isZero();
        assertThat(MetadataSnapshotFile.toRecords(sampleImage())).noneMatch(ProducerIdsRecord.class::isInstance);
    }
}
