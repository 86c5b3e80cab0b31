package dev.millrace.broker.controller;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

import dev.millrace.broker.controller.MetadataImage.BrokerImage;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;
import dev.millrace.broker.controller.MetadataRecord.BrokerRegistrationRecord;
import dev.millrace.broker.controller.MetadataRecord.BrokerStateRecord;
import dev.millrace.broker.controller.MetadataRecord.ClusterIdRecord;
import dev.millrace.broker.controller.MetadataRecord.ConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.GroupConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.PartitionRecord;
import dev.millrace.broker.controller.MetadataRecord.ProducerIdsRecord;
import dev.millrace.broker.controller.MetadataRecord.TopicRecord;
import dev.millrace.broker.controller.MetadataRecord.UserScramCredentialRecord;

/**
 * Writes a {@link MetadataImage} to one snapshot file and reads it back. The image is stored as the
 * records that rebuild it from empty (the {@link ClusterIdRecord} once set; per broker, by id, its
 * {@link BrokerRegistrationRecord} and, unless fenced, a {@link BrokerStateRecord}; per topic, by name: its {@link TopicRecord}, its
 * {@link ConfigRecord}s, its {@link PartitionRecord}s; then, once any producer id was allocated, one
 * {@link ProducerIdsRecord} with broker id -1 carrying the next producer id; last, per group by id, its
 * {@link GroupConfigRecord}s by name; then per user by name, its {@link UserScramCredentialRecord}s by mechanism;
 * then the ACL bindings in creation order; then per quota entity, in image order, its
 * {@link MetadataRecord.ClientQuotaRecord}s by key), in
 * the batch format of
 * {@link MetadataRecordSerde}, so loading a snapshot is the same replay as applying the log.
 * All integers are big-endian.
 *
 * <pre>
 *   +---------------+-----------------+----------------------+----------------------+--------------+----------------+
 *   | magic (int32) | version (int16) | appliedIndex (int64) | batch length (int32) | record batch | crc32c (int32) |
 *   | 0x4D52534E    | 0               |                      |                      |              |                |
 *   +---------------+-----------------+----------------------+----------------------+--------------+----------------+
 *     magic is "MRSN"; the CRC-32C covers every byte before it
 * </pre>
 *
 * <p>Reading checks the length, magic, version and checksum before decoding, and the errors name
 * the file and the expected and actual values. Stateless and thread-safe.
 */
final class MetadataSnapshotFile {

    static final String FILE_NAME = "metadata.snapshot";
    static final int MAGIC = 0x4D52534E;
    static final short VERSION = 0;

    private static final int HEADER_BYTES = 4 + 2 + 8 + 4;
    private static final int TRAILER_BYTES = 4;

    private MetadataSnapshotFile() {
    }

    /** Writes the image to {@code dir}/{@value #FILE_NAME} and forces it to disk. */
    static Path write(Path dir, MetadataImage image) throws IOException {
        byte[] batch = MetadataRecordSerde.encode(toRecords(image));
        ByteBuffer buf = ByteBuffer.allocate(HEADER_BYTES + batch.length + TRAILER_BYTES);
        buf.putInt(MAGIC).putShort(VERSION).putLong(image.appliedIndex()).putInt(batch.length).put(batch);
        CRC32C crc = new CRC32C();
        crc.update(buf.array(), 0, buf.position());
        buf.putInt((int) crc.getValue());
        buf.flip();
        Path file = dir.resolve(FILE_NAME);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (buf.hasRemaining()) {
                channel.write(buf);
            }
            channel.force(true);
        }
        return file;
    }

    /**
     * @throws MetadataCodecException when the file is not a valid snapshot of a supported version
     */
    static MetadataImage read(Path file) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(Files.readAllBytes(file));
        if (buf.remaining() < HEADER_BYTES + TRAILER_BYTES) {
            throw new MetadataCodecException("Snapshot " + file + " has " + buf.remaining()
                    + " bytes, fewer than the " + (HEADER_BYTES + TRAILER_BYTES) + " of an empty snapshot");
        }
        int magic = buf.getInt();
        if (magic != MAGIC) {
            throw new MetadataCodecException("Snapshot " + file + " starts with magic 0x" + Integer.toHexString(magic)
                    + ", expected 0x" + Integer.toHexString(MAGIC));
        }
        short version = buf.getShort();
        if (version != VERSION) {
            throw new MetadataCodecException("Snapshot " + file + " has unsupported version " + version
                    + ", expected " + VERSION);
        }
        long appliedIndex = buf.getLong();
        int batchLength = buf.getInt();
        int expectedLength = HEADER_BYTES + batchLength + TRAILER_BYTES;
        if (batchLength < 0 || expectedLength != buf.limit()) {
            throw new MetadataCodecException("Snapshot " + file + " is " + buf.limit() + " bytes but its batch length "
                    + batchLength + " makes it " + expectedLength);
        }
        CRC32C crc = new CRC32C();
        crc.update(buf.array(), 0, HEADER_BYTES + batchLength);
        int storedCrc = buf.getInt(HEADER_BYTES + batchLength);
        if (storedCrc != (int) crc.getValue()) {
            throw new MetadataCodecException("Snapshot " + file + " has CRC-32C 0x" + Integer.toHexString(storedCrc)
                    + " but its contents give 0x" + Integer.toHexString((int) crc.getValue()));
        }
        ByteBuffer batch = buf.slice(HEADER_BYTES, batchLength);
        MetadataImageBuilder builder = new MetadataImageBuilder(MetadataImage.EMPTY);
        for (MetadataRecord record : MetadataRecordSerde.decode(batch)) {
            builder.replay(record);
        }
        return builder.build(appliedIndex);
    }

    /** The records that rebuild {@code image} from an empty one. */
    static List<MetadataRecord> toRecords(MetadataImage image) {
        List<MetadataRecord> records = new ArrayList<>();
        if (image.clusterId() != null) {
            records.add(new ClusterIdRecord(image.clusterId()));
        }
        for (BrokerImage broker : image.brokers().values()) {
            records.add(new BrokerRegistrationRecord(broker.id(), broker.incarnationId(), broker.epoch(),
                    broker.host(), broker.port(), broker.rack(), broker.listeners()));
            if (broker.state() != BrokerState.FENCED) {
                records.add(new BrokerStateRecord(broker.id(), broker.epoch(), broker.state()));
            }
        }
        for (TopicImage topic : image.topics().values()) {
            records.add(new TopicRecord(topic.name(), topic.topicId()));
            for (Map.Entry<String, String> config : topic.configs().entrySet()) {
                records.add(new ConfigRecord(topic.name(), config.getKey(), config.getValue()));
            }
            for (PartitionImage p : topic.partitions().values()) {
                records.add(new PartitionRecord(topic.topicId(), p.partition(), p.replicas(), p.isr(), p.leader(),
                        p.leaderEpoch(), p.partitionEpoch(), p.addingReplicas(), p.removingReplicas()));
            }
        }
        if (image.nextProducerId() > 0) {
            records.add(new ProducerIdsRecord(-1, image.nextProducerId()));
        }
        image.groupConfigs().forEach((groupId, settings) -> settings.forEach((name, value) ->
                records.add(new GroupConfigRecord(groupId, name, value))));
        image.scramCredentials().forEach((user, credentials) -> credentials.forEach((mechanism, c) ->
                records.add(new UserScramCredentialRecord(user,
                        org.apache.kafka.common.security.scram.internals.ScramMechanism.forMechanismName(mechanism)
                                .type(), c.salt(), c.storedKey(), c.serverKey(), c.iterations()))));
        image.acls().forEach(acl -> records.add(MetadataRecord.AclRecord.of(acl)));
        image.clientQuotas().forEach((entity, quotas) -> quotas.forEach((key, value) ->
                records.add(MetadataRecord.ClientQuotaRecord.set(entity.entries(), key, value))));
        return records;
    }
}
