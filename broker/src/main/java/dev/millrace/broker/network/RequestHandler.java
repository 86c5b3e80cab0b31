package dev.millrace.broker.network;

import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestContext;

/**
 * Handles the parsed requests of one connection's stream. The returned future completes with the
 * response, or with null when the request takes none (a produce with acks=0). A future completed
 * exceptionally is answered with the request's own error response ({@code getErrorResponse}).
 *
 * <p>Implementations are called on a request thread, never the network thread, and must be
 * thread-safe: requests of different connections run concurrently.
 */
@FunctionalInterface
public interface RequestHandler {
    CompletableFuture<AbstractResponse> handle(RequestContext context, AbstractRequest request);
}
