package dev.millrace.broker.server;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.types.Struct;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.txn.TransactionCoordinator;
import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ExtensionFormatException;
import dev.millrace.protocol.ext.XaCodes;
import dev.millrace.protocol.ext.XaComplete;
import dev.millrace.protocol.ext.XaPrepare;
import dev.millrace.protocol.ext.XaRecover;

/**
 * The XA extensions (XaPrepare, XaComplete, XaRecover; {@code dev.millrace.broker.txn.XaBranches}) between the wire
 * and the transaction coordinator. Unlike the other extensions, a body that does not parse (a truncated frame, a
 * negative length, a Xid out of bounds, an unknown action) is answered INVALID_REQUEST with XAER_INVAL and a message
 * naming what was wrong, and the connection stays open: a transaction manager maps the answer to an XAException
 * instead of seeing a lost connection (which it would take for XAER_RMFAIL and retry).
 *
 * <p>Stateless and thread-safe.
 */
final class XaHandler {

    private static final Logger log = LoggerFactory.getLogger(XaHandler.class);

    private XaHandler() {
    }

    static CompletableFuture<Struct> handle(ExtensionApi api, ByteBuffer body, TransactionCoordinator coordinator) {
        try {
            return switch (api) {
                case XA_PREPARE -> prepare(XaPrepare.Request.read(body), coordinator);
                case XA_COMPLETE -> complete(XaComplete.Request.read(body), coordinator);
                case XA_RECOVER -> CompletableFuture.completedFuture(
                        coordinator.xaRecover(XaRecover.Request.read(body).transactionalIdPrefix()).toStruct());
                default -> throw new IllegalArgumentException(api + " is not an XA extension");
            };
        } catch (ExtensionFormatException e) {
            log.debug("Refused a malformed {} request: {}", api.displayName(), e.getMessage());
            return CompletableFuture.completedFuture(invalid(api, e.getMessage()));
        }
    }

    private static CompletableFuture<Struct> prepare(XaPrepare.Request request, TransactionCoordinator coordinator) {
        if (request.transactionalId().isEmpty()) {
            return CompletableFuture.completedFuture(invalid(ExtensionApi.XA_PREPARE,
                    "transactional_id must not be empty"));
        }
        if (request.producerId() < -1 || request.producerId() == -1 && request.producerEpoch() != -1) {
            return CompletableFuture.completedFuture(invalid(ExtensionApi.XA_PREPARE, "producer_id "
                    + request.producerId() + " with producer_epoch " + request.producerEpoch()
                    + ": give both, or -1 for both"));
        }
        return coordinator.xaPrepare(request).thenApply(XaPrepare.Response::toStruct);
    }

    private static CompletableFuture<Struct> complete(XaComplete.Request request,
                                                      TransactionCoordinator coordinator) {
        if (request.transactionalId().isEmpty()) {
            return CompletableFuture.completedFuture(invalid(ExtensionApi.XA_COMPLETE,
                    "transactional_id must not be empty"));
        }
        return coordinator.xaComplete(request).thenApply(XaComplete.Response::toStruct);
    }

    private static Struct invalid(ExtensionApi api, String message) {
        short code = Errors.INVALID_REQUEST.code();
        return switch (api) {
            case XA_PREPARE -> XaPrepare.Response.error(code, XaCodes.XAER_INVAL, message).toStruct();
            case XA_COMPLETE -> new XaComplete.Response(code, message, XaCodes.XAER_INVAL).toStruct();
            default -> XaRecover.Response.error(code, message).toStruct();
        };
    }
}
