package dev.millrace.broker.log;

/**
 * An offset with where it lives on disk: the base offset of its segment and its byte position there.
 * The log publishes its end as one of these, so a reader can bound a read of the active segment to
 * bytes that are completely written.
 */
public record LogOffsetMetadata(long offset, long segmentBaseOffset, int position) {
}
