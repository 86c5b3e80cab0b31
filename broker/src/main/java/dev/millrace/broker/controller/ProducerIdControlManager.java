package dev.millrace.broker.controller;

import java.util.List;

import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnknownServerException;

import dev.millrace.broker.controller.MetadataRecord.ProducerIdsRecord;

/**
 * Computes producer-id block allocations (Kafka's AllocateProducerIds): the next block starts at the
 * image's {@link MetadataImage#nextProducerId()} and holds {@link ProducerIdBlock#BLOCK_SIZE} ids;
 * the one record committed for it, a {@link ProducerIdsRecord}, moves the next producer id past the
 * block.
 *
 * <pre>
 *   image.nextProducerId = n
 *   block                = [n, n + 1000 - 1] for the asking broker
 *   record               = ProducerIdsRecord(brokerId, n + 1000)
 * </pre>
 *
 * <p>Blocks never overlap because the controller runs one event at a time and each event sees an
 * image that already holds every earlier allocation; they survive restarts because the record is in
 * the quorum log and the next producer id is in every snapshot.
 *
 * <p>Never changes the image it is given. Stateless and thread-safe.
 */
final class ProducerIdControlManager {

    /**
     * @throws InvalidRequestException when the broker id is negative
     * @throws UnknownServerException  when the id space is exhausted (another block would pass
     *                                 {@link Long#MAX_VALUE})
     */
    ControllerResult<ProducerIdBlock> handleAllocateProducerIds(MetadataImage image, int brokerId) {
        if (brokerId < 0) {
            throw new InvalidRequestException("Cannot allocate producer ids to broker " + brokerId
                    + ": broker ids are not negative");
        }
        long first = image.nextProducerId();
        if (first > Long.MAX_VALUE - ProducerIdBlock.BLOCK_SIZE) {
            throw new UnknownServerException("Cannot allocate producer ids to broker " + brokerId
                    + ": every producer id is taken (the next one would be " + first + ")");
        }
        ProducerIdBlock block = new ProducerIdBlock(brokerId, first, ProducerIdBlock.BLOCK_SIZE);
        return new ControllerResult<>(List.of(new ProducerIdsRecord(brokerId, block.nextBlockFirstId())), block);
    }
}
