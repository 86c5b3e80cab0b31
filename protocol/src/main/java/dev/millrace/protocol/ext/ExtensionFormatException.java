package dev.millrace.protocol.ext;

/** An extension request or response that does not follow its documented layout; the message says which part. */
public class ExtensionFormatException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public ExtensionFormatException(String message, Throwable cause) {
        super(message, cause);
    }

    public ExtensionFormatException(String message) {
        super(message);
    }
}
