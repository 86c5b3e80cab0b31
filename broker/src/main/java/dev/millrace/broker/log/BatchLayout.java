package dev.millrace.broker.log;

import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.Records;

/**
 * Where the fields of a v2 record batch header lie (KIP-98), for the classes of this package that read or rewrite them
 * in place ({@link BatchCursor}, {@link BatchCut}, {@link BatchSubset}); Kafka's own constants where it makes them
 * public. The whole header is drawn in {@link BatchCut}'s class comment.
 */
final class BatchLayout {

    /** batchLength, int32: the bytes after it. */
    static final int BATCH_LENGTH = Records.SIZE_OFFSET;
    /** baseOffset and batchLength: the bytes batchLength does not count. */
    static final int LOG_OVERHEAD = Records.LOG_OVERHEAD;
    /** crc, uint32: CRC-32C over attributes to the end. */
    static final int CRC = DefaultRecordBatch.CRC_OFFSET;
    /** attributes, int16: where the CRC starts. */
    static final int ATTRIBUTES = 21;
    static final int LAST_OFFSET_DELTA = DefaultRecordBatch.LAST_OFFSET_DELTA_OFFSET;
    static final int BASE_TIMESTAMP = 27;
    static final int MAX_TIMESTAMP = 35;
    static final int BASE_SEQUENCE = 53;
    static final int RECORD_COUNT = DefaultRecordBatch.RECORDS_COUNT_OFFSET;
    /** The first record; the header's size. */
    static final int RECORDS = DefaultRecordBatch.RECORD_BATCH_OVERHEAD;

    private BatchLayout() {
    }
}
