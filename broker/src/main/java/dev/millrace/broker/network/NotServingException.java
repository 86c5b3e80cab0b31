package dev.millrace.broker.network;

/**
 * A handler's answer that this node does not serve the request yet: the connection is closed without a response
 * ({@link CloseReason#NOT_SERVING}), so that the client takes its requests to another node. A node still starting
 * answers so: an error response would have to name an error for every API, and the one Kafka has for it
 * (BROKER_NOT_AVAILABLE) is not retriable for Kafka's clients (a group consumer's {@code poll} would throw it),
 * while every client retries a closed connection elsewhere.
 */
public final class NotServingException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public NotServingException(String message) {
        super(message, null, false, false);
    }
}
