/** Partition log storage. */
package dev.millrace.broker.log;
