package dev.millrace.broker.share;

import java.nio.ByteBuffer;
import java.util.Objects;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.types.Struct;

import dev.millrace.protocol.ext.ExtensionFormatException;
import dev.millrace.protocol.ext.ShareMember;

/**
 * The ShareMember extension at a share group's coordinator ({@link ShareMember} draws the frames): other brokers'
 * share-partition leaders ask about a member that fetches from them. Bad input is answered, never a closed
 * connection: a malformed body or an empty group or member id gets INVALID_REQUEST naming what was wrong.
 *
 * <p>Thread-safe; called on request threads; never blocks.
 */
public final class ShareMemberHandler {

    private final ShareGroupCoordinator coordinator;

    ShareMemberHandler(ShareGroupCoordinator coordinator) {
        this.coordinator = Objects.requireNonNull(coordinator, "coordinator");
    }

    /** Answers the request in {@code body} (the response body). */
    public Struct handle(ByteBuffer body) {
        return answer(body).toStruct();
    }

    ShareMember.Response answer(ByteBuffer body) {
        ShareMember.Request request;
        try {
            request = ShareMember.Request.read(body);
        } catch (ExtensionFormatException e) {
            return ShareMember.Response.error(Errors.INVALID_REQUEST.code(), e.getMessage());
        }
        if (request.groupId().isEmpty()) {
            return ShareMember.Response.error(Errors.INVALID_REQUEST.code(), "ShareMember needs a group id");
        }
        if (request.memberId().isEmpty()) {
            return ShareMember.Response.error(Errors.INVALID_REQUEST.code(), "ShareMember needs a member id (group "
                    + request.groupId() + ")");
        }
        return coordinator.describeMember(request.groupId(), request.memberId());
    }
}
