package dev.millrace.broker.server;

import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;

import dev.millrace.broker.txn.ProducerIdManager;

/**
 * InitProducerId for idempotent producers (no transactional id; those go to the transaction
 * coordinator): a fresh producer id (from a block allocated through the metadata quorum) with
 * epoch 0. A producer that asks again with its current id gets a fresh id, which resets its
 * sequences just as an epoch bump would.
 *
 * <p>Thread-safe; called on request threads.
 */
final class InitProducerIdHandler {

    private final ProducerIdManager producerIds;

    InitProducerIdHandler(ProducerIdManager producerIds) {
        this.producerIds = producerIds;
    }

    CompletableFuture<InitProducerIdResponse> handle(InitProducerIdRequest request) {
        return producerIds.nextProducerId().handle((id, error) -> {
            InitProducerIdResponseData data = new InitProducerIdResponseData();
            if (error != null) {
                Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                        ? error.getCause() : error;
                return new InitProducerIdResponse(data.setErrorCode(Errors.forException(cause).code())
                        .setProducerId(RecordBatch.NO_PRODUCER_ID).setProducerEpoch(RecordBatch.NO_PRODUCER_EPOCH));
            }
            return new InitProducerIdResponse(data.setProducerId(id).setProducerEpoch((short) 0));
        });
    }
}
