package dev.millrace.broker.log;

import org.apache.kafka.common.record.internal.Records;

/**
 * The result of a read: where it started and the bytes. {@code records} is a slice of the segment
 * file ({@code FileRecords}) that can go to a socket with zero-copy, or empty. Like Kafka, the
 * slice starts at the batch holding the requested offset (which may begin before it) and may end
 * with a partial batch when the byte limit cuts one; readers skip both.
 */
public record FetchDataInfo(LogOffsetMetadata fetchOffsetMetadata, Records records) {
}
