/**
 * The JMS-message-to-Kafka-record mapping, written so that clients in other languages can implement it from these
 * docs alone. Start at {@link dev.millrace.protocol.jms.JmsRecordCodec} (record parts and header table), then
 * {@link dev.millrace.protocol.jms.TypedValueCodec} (property and map/stream value encoding),
 * {@link dev.millrace.protocol.jms.BodyCodec} (body layouts) and {@link dev.millrace.protocol.jms.JmsDestination}
 * (destination encoding).
 *
 * <p>This package has no dependency on {@code jakarta.jms}: values are plain Java objects, and errors are
 * {@link dev.millrace.protocol.jms.JmsRecordFormatException}s naming the header and byte offset.
 */
package dev.millrace.protocol.jms;
