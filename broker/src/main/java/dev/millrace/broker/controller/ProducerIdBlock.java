package dev.millrace.broker.controller;

/**
 * A block of consecutive producer ids that the controller handed to one broker, which gives them
 * to idempotent and transactional producers (Kafka's AllocateProducerIds). Every id of the block is
 * the broker's alone: the controller never hands it out again, not even after a restart.
 *
 * @param brokerId        the broker the block was allocated to
 * @param firstProducerId the first id of the block
 * @param size            the number of ids, {@link #lastProducerId()} included
 */
public record ProducerIdBlock(int brokerId, long firstProducerId, int size) {

    /** The number of ids in every block the controller allocates. */
    public static final int BLOCK_SIZE = 1000;

    public ProducerIdBlock {
        if (firstProducerId < 0) {
            throw new IllegalArgumentException("firstProducerId must not be negative, got " + firstProducerId);
        }
        if (size <= 0) {
            throw new IllegalArgumentException("size must be positive, got " + size);
        }
    }

    /** The last id of the block. */
    public long lastProducerId() {
        return firstProducerId + size - 1;
    }

    /** The first id after the block: the first id of the next block. */
    public long nextBlockFirstId() {
        return firstProducerId + size;
    }
}
