package dev.millrace.broker.share;

/**
 * The headers {@link DeadLetterPublisher} adds to a dead-lettered copy of a record, beside the
 * record's own headers. Every value is a UTF-8 string:
 *
 * <pre>
 *   millrace.dlq.original.topic       the topic the record was consumed from
 *   millrace.dlq.original.partition   its partition, decimal
 *   millrace.dlq.original.offset      its offset, decimal
 *   millrace.dlq.delivery.count       how many times it was delivered, decimal
 *   millrace.dlq.reason               "rejected" or "delivery-count-limit"
 *   millrace.dlq.group                the share group that archived it
 * </pre>
 */
public final class ShareDeadLetterHeaders {

    public static final String ORIGINAL_TOPIC = "millrace.dlq.original.topic";
    public static final String ORIGINAL_PARTITION = "millrace.dlq.original.partition";
    public static final String ORIGINAL_OFFSET = "millrace.dlq.original.offset";
    public static final String DELIVERY_COUNT = "millrace.dlq.delivery.count";
    public static final String REASON = "millrace.dlq.reason";
    public static final String GROUP = "millrace.dlq.group";

    private ShareDeadLetterHeaders() {
    }
}
