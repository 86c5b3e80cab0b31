package dev.millrace.broker.network;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.protocol.types.Struct;

import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestContext;

import dev.millrace.protocol.ext.ExtensionHeader;

/**
 * Handles the parsed requests of one connection's stream. The returned future completes with the
 * response, or with null when the request takes none (a produce with acks=0). A future completed
 * exceptionally is answered with the request's own error response ({@code getErrorResponse}), except with a
 * {@link NotServingException}, which closes the connection without a response.
 *
 * <p>Implementations are called on a request thread, never the network thread, and must be
 * thread-safe: requests of different connections run concurrently.
 */
@FunctionalInterface
public interface RequestHandler {
    CompletableFuture<AbstractResponse> handle(RequestContext context, AbstractRequest request);

    /**
     * Handles a Millrace extension request ({@code dev.millrace.protocol.ext}) whose key and version the
     * {@link ApiVersionTable} lists; {@code body} is positioned at the request body. The future completes with the
     * response body. A failed future, or a body that does not parse, closes the connection.
     */
    default CompletableFuture<Struct> handleExtension(ExtensionHeader header, ByteBuffer body) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException(
                "extension API " + header.apiKey() + " is not served"));
    }

    /**
     * The connection whose requests carried {@code connectionId} ({@link RequestContext#connectionId}) closed, for
     * whatever reason (the peer closed it, its process died, bad input). Called once per connection, on its event
     * loop: must not block.
     */
    default void onConnectionClosed(String connectionId) {
    }
}
