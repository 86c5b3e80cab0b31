package dev.millrace.broker.share;

/**
 * A record a share-partition archived without it being accepted, to be copied to the topic's
 * dead-letter topic: which record, after how many deliveries, and why ({@link #REASON_REJECTED},
 * {@link #REASON_DELIVERY_LIMIT}).
 */
public record DeadLetter(SharePartitionKey source, long offset, int deliveryCount, String reason) {

    /** A member rejected the record. */
    public static final String REASON_REJECTED = "rejected";

    /** The record was released, or its lock expired, after {@code group.share.delivery.count.limit} deliveries. */
    public static final String REASON_DELIVERY_LIMIT = "delivery-count-limit";
}
