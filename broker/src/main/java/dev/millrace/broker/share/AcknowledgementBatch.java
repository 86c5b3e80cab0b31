package dev.millrace.broker.share;

/**
 * One acknowledgement batch from ShareFetch or ShareAcknowledge: offsets {@code firstOffset} to
 * {@code lastOffset} inclusive, with either one type for the whole range or one type per offset.
 */
public record AcknowledgementBatch(long firstOffset, long lastOffset, byte[] types) {

    /** The type id for {@code offset} (in range), or -1 when the batch is malformed. */
    byte typeOf(long offset) {
        if (types.length == 1) {
            return types[0];
        }
        long index = offset - firstOffset;
        return index < types.length && types.length == lastOffset - firstOffset + 1 ? types[(int) index] : -1;
    }
}
