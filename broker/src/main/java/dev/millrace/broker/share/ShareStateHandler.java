package dev.millrace.broker.share;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.types.Struct;

import dev.millrace.protocol.ext.ShareState;

/**
 * The ShareState extension at the share-state coordinator ({@link ShareState} documents the frames): other brokers'
 * reads and writes of share-partition state, answered by the local {@link ShareStateCoordinator}. Errors go back as
 * codes ({@code Errors.forException}), never as a closed connection.
 *
 * <p>Thread-safe; called on request threads; a write's answer completes on a replication thread, without holding the
 * request thread.
 */
public final class ShareStateHandler {

    private final ShareStateCoordinator coordinator;

    public ShareStateHandler(ShareStateCoordinator coordinator) {
        this.coordinator = Objects.requireNonNull(coordinator, "coordinator");
    }

    public CompletableFuture<Struct> handle(ByteBuffer body) {
        ShareState.Request request = ShareState.Request.read(body);
        return answer(request).exceptionally(ShareStateHandler::error).thenApply(ShareState.Response::toStruct);
    }

    private CompletableFuture<ShareState.Response> answer(ShareState.Request r) {
        if (r.groupId() == null || r.groupId().isEmpty()) {
            return CompletableFuture.completedFuture(ShareState.Response.error(Errors.INVALID_REQUEST.code(),
                    "ShareState needs a group id"));
        }
        try {
            return switch (r.op()) {
                case ShareState.READ -> {
                    Optional<LogShareStateStore.StoredState> stored = coordinator.read(r.groupId(), r.topicId(),
                            r.partition(), r.leaderEpoch());
                    yield CompletableFuture.completedFuture(new ShareState.Response(Errors.NONE.code(), null,
                            stored.map(LogShareStateStore.StoredState::full).orElse(null),
                            stored.map(LogShareStateStore.StoredState::deltas).orElse(List.of()), List.of()));
                }
                case ShareState.WRITE -> {
                    if (r.value() == null) {
                        yield CompletableFuture.completedFuture(ShareState.Response.error(
                                Errors.INVALID_REQUEST.code(), "ShareState WRITE needs a value"));
                    }
                    yield coordinator.write(r.groupId(), r.topicId(), r.partition(), r.leaderEpoch(),
                            new SharePartition.EncodedState(r.full(), r.version(), r.value())).thenApply(v -> ok());
                }
                case ShareState.DELETE -> coordinator.delete(r.groupId(), r.topicId(), r.partition())
                        .thenApply(v -> ok());
                case ShareState.LIST -> CompletableFuture.completedFuture(new ShareState.Response(Errors.NONE.code(),
                        null, null, List.of(), coordinator.partitionsOf(r.groupId())));
                case ShareState.GROUP_CONFIG -> coordinator.saveGroupConfig(r.groupId(), r.value() == null
                        ? java.util.Map.of() : ShareStateSerde.decodeGroupConfigValue(ByteBuffer.wrap(r.value())))
                        .thenApply(v -> ok());
                default -> CompletableFuture.completedFuture(ShareState.Response.error(Errors.INVALID_REQUEST.code(),
                        "unknown ShareState op " + r.op()));
            };
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static ShareState.Response ok() {
        return ShareState.Response.error(Errors.NONE.code(), null);
    }

    private static ShareState.Response error(Throwable t) {
        Throwable cause = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        Errors error = Errors.forException(cause);
        return ShareState.Response.error(error.code(), cause.getMessage());
    }
}
