package dev.millrace.jms.message;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.apache.kafka.common.header.Header;

import dev.millrace.protocol.delay.DelayedDelivery;
import dev.millrace.protocol.jms.JmsRecord;

/**
 * Provider-specific properties ({@code JMS_Millrace_*}, the prefix JMS 3.1 3.5.10 reserves for providers) that a
 * received message gets from Millrace's own record headers, so JMS applications can read where a dead-lettered or
 * expired message came from and how late a delayed one arrived:
 *
 * <pre>
 * record header                       property                              type
 * ----------------------------------  ------------------------------------  ------
 * millrace.dlq.original.topic         JMS_Millrace_DLQOriginalTopic         String
 * millrace.dlq.original.partition     JMS_Millrace_DLQOriginalPartition     int
 * millrace.dlq.original.offset        JMS_Millrace_DLQOriginalOffset        long
 * millrace.dlq.delivery.count         JMS_Millrace_DLQDeliveryCount         int
 * millrace.dlq.reason                 JMS_Millrace_DLQReason                String: rejected | delivery-count-limit
 * millrace.dlq.group                  JMS_Millrace_DLQGroup                 String
 * millrace.expiry.original.topic      JMS_Millrace_ExpiryOriginalTopic      String
 * millrace.expiry.original.partition  JMS_Millrace_ExpiryOriginalPartition  int
 * millrace.expiry.original.offset     JMS_Millrace_ExpiryOriginalOffset     long
 * millrace.expiry.time.ms             JMS_Millrace_ExpiryTime               long (ms since the epoch)
 * millrace.delay.delivered.ms         JMS_Millrace_DelayDeliveredTime       long (ms since the epoch, int64 header)
 * </pre>
 *
 * The dead-letter headers are the broker's (its {@code ShareDeadLetterHeaders}); the others come from the provider
 * (wire {@code ExpiredRecords}) and the delay service ({@link DelayedDelivery}). A header that does not parse is
 * left out. Stateless and thread-safe.
 */
final class VendorProperties {

    private enum Kind { STRING, INT, LONG, INT64 }

    private record Mapping(String property, Kind kind) {
    }

    private static final Map<String, Mapping> BY_HEADER = Map.ofEntries(
            Map.entry("millrace.dlq.original.topic", new Mapping("JMS_Millrace_DLQOriginalTopic", Kind.STRING)),
            Map.entry("millrace.dlq.original.partition", new Mapping("JMS_Millrace_DLQOriginalPartition", Kind.INT)),
            Map.entry("millrace.dlq.original.offset", new Mapping("JMS_Millrace_DLQOriginalOffset", Kind.LONG)),
            Map.entry("millrace.dlq.delivery.count", new Mapping("JMS_Millrace_DLQDeliveryCount", Kind.INT)),
            Map.entry("millrace.dlq.reason", new Mapping("JMS_Millrace_DLQReason", Kind.STRING)),
            Map.entry("millrace.dlq.group", new Mapping("JMS_Millrace_DLQGroup", Kind.STRING)),
            Map.entry("millrace.expiry.original.topic", new Mapping("JMS_Millrace_ExpiryOriginalTopic", Kind.STRING)),
            Map.entry("millrace.expiry.original.partition",
                    new Mapping("JMS_Millrace_ExpiryOriginalPartition", Kind.INT)),
            Map.entry("millrace.expiry.original.offset", new Mapping("JMS_Millrace_ExpiryOriginalOffset", Kind.LONG)),
            Map.entry("millrace.expiry.time.ms", new Mapping("JMS_Millrace_ExpiryTime", Kind.LONG)),
            Map.entry(DelayedDelivery.DELIVERED_MS, new Mapping("JMS_Millrace_DelayDeliveredTime", Kind.INT64)));

    private VendorProperties() {
    }

    static void addTo(JmsRecord record, MillraceMessage message) {
        for (Header header : record.headers()) {
            Mapping mapping = BY_HEADER.get(header.key());
            if (mapping == null || header.value() == null) {
                continue;
            }
            Object value = parse(mapping.kind(), header.value());
            if (value != null) {
                message.properties.setTrusted(mapping.property(), value);
            }
        }
    }

    private static Object parse(Kind kind, byte[] bytes) {
        if (kind == Kind.INT64) {
            return bytes.length == 8 ? ByteBuffer.wrap(bytes).getLong() : null;
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        try {
            return switch (kind) {
                case INT -> Integer.parseInt(text);
                case LONG -> Long.parseLong(text);
                default -> text;
            };
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
