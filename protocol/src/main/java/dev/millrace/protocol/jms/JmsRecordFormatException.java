package dev.millrace.protocol.jms;

/**
 * A record, or one of its headers, does not follow the JMS record mapping.
 *
 * <p>Every instance names the part of the record that is wrong ({@link #field()}: a header key such as
 * {@code jms.priority}, or {@link #KEY} / {@link #VALUE}) and the byte offset inside that part's bytes at which
 * decoding failed ({@link #offset()}), so that a bad record written by another client can be found and explained without a
 * debugger. An offset of {@link #NO_OFFSET} means the problem is not inside the bytes (for example an invalid property
 * name in a header key, or a duplicated header).
 *
 * <p>Codecs throw this unchecked exception; the JMS provider converts it to a {@code MessageFormatException} at its API
 * boundary. Instances are immutable and thread-safe.
 */
public class JmsRecordFormatException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** {@link #field()} for problems in the record key. */
    public static final String KEY = "<record key>";
    /** {@link #field()} for problems in the record value (the message body). */
    public static final String VALUE = "<record value>";
    /** {@link #offset()} when the problem is not at a byte position. */
    public static final int NO_OFFSET = -1;

    private final String field;
    private final int offset;

    public JmsRecordFormatException(String field, int offset, String problem) {
        super(describe(field, offset, problem));
        this.field = field;
        this.offset = offset;
    }

    public JmsRecordFormatException(String field, int offset, String problem, Throwable cause) {
        this(field, offset, problem);
        initCause(cause);
    }

    private static String describe(String field, int offset, String problem) {
        String where = field.startsWith("<") ? field : "header '" + field + "'";
        return offset == NO_OFFSET
                ? "Malformed JMS record: " + where + ": " + problem
                : "Malformed JMS record: " + where + " at byte offset " + offset + ": " + problem;
    }

    /** The header key, or {@link #KEY} / {@link #VALUE}, whose bytes are malformed. */
    public String field() {
        return field;
    }

    /** The offset in that part's bytes where decoding failed, or {@link #NO_OFFSET}. */
    public int offset() {
        return offset;
    }
}
