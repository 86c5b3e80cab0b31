package dev.millrace.broker.network;

/**
 * Why the broker closed a client connection (or refused it): each close is logged once with the client's address
 * and counted by reason in {@link NetworkStats}.
 */
public enum CloseReason {
    /** The size prefix is above {@code socket.request.max.bytes}. */
    OVERSIZED_FRAME,
    /** The size prefix is negative. */
    NEGATIVE_SIZE,
    /** The client closed the connection part-way through a frame. */
    TRUNCATED_FRAME,
    /** The request header names an API key that is neither Kafka's nor a Millrace extension. */
    UNKNOWN_API_KEY,
    /** The API is known but not served in the requested version (ApiVersions is answered instead). */
    UNSUPPORTED_VERSION,
    /** The request header or body does not parse. */
    MALFORMED_REQUEST,
    /** Nothing read, nothing written and no request handled for {@code connections.max.idle.ms}. */
    IDLE,
    /** {@code max.connections} connections were already open. */
    TOO_MANY_CONNECTIONS,
    /** {@code max.connections.per.ip} connections from the same address were already open. */
    TOO_MANY_CONNECTIONS_FROM_IP,
    /**
     * The node does not serve the request yet (it is starting: {@link NotServingException}); the client goes to
     * another node. Logged at debug: every client of a restarting node meets it.
     */
    NOT_SERVING,
    /** The request was handled but its response could not be built or written. */
    RESPONSE_FAILED,
    /** A bug: an exception reached the connection's handler (counted in {@link NetworkStats#unexpectedErrors()}). */
    UNEXPECTED_ERROR
}
