/**
 * The Millrace Jakarta Messaging 3.1 provider: for now its destinations ({@link dev.millrace.jms.MillraceQueue},
 * {@link dev.millrace.jms.MillraceTopic} and their temporary forms). Connection factory, connection, session, producer
 * and consumer come next. This module never depends on broker code; it speaks to brokers only through the protocol
 * module's formats.
 */
package dev.millrace.jms;
