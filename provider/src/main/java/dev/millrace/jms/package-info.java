/**
 * The Millrace Jakarta Messaging 3.1 provider: {@link dev.millrace.jms.MillraceConnectionFactory} and everything it
 * creates (connections, sessions, producers, consumers, JMSContext), and the destinations. Options and the mapping
 * onto Kafka are in provider/README.md. This module never depends on broker code; it speaks to brokers only through
 * kafka-clients and the protocol module's formats.
 */
package dev.millrace.jms;
