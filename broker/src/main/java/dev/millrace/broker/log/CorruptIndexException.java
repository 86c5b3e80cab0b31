package dev.millrace.broker.log;

/** An index file whose entries are out of order or point outside their segment; the loader rebuilds it. */
public final class CorruptIndexException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public CorruptIndexException(String message) {
        super(message);
    }
}
