package dev.millrace.broker.controller;

/**
 * Bytes that are not a valid metadata record batch or snapshot: truncated, an unknown record type
 * or version, a length that does not match, a bad checksum. The message says what was found where.
 */
public class MetadataCodecException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public MetadataCodecException(String message) {
        super(message);
    }
}
