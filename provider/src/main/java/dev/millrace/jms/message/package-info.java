/**
 * The JMS message types of the Millrace provider and their conversion to and from Kafka records.
 *
 * <p>{@link dev.millrace.jms.message.MillraceMessage} holds header fields and properties; its five subclasses add the
 * bodies. {@link dev.millrace.jms.message.RecordMessageMapper} is the only class that meets the record format (defined
 * in {@code dev.millrace.protocol.jms}); sessions call it on send and receive. Messages are not thread-safe.
 */
package dev.millrace.jms.message;
