package dev.millrace.broker.group;

import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;

/** Response bodies shared by the rebalance engine and the handlers. Stateless. */
final class GroupResponses {

    private GroupResponses() {
    }

    /**
     * A JoinGroup answered with {@code error}; {@code memberId} is the member's id (with
     * MEMBER_ID_REQUIRED, the id just issued). The selected protocol is left null, which the
     * response class turns into "" for versions before 7.
     */
    static JoinGroupResponseData joinError(Errors error, String memberId) {
        return new JoinGroupResponseData()
                .setErrorCode(error.code())
                .setGenerationId(-1)
                .setProtocolName(null)
                .setLeader("")
                .setMemberId(memberId == null ? "" : memberId);
    }

    static SyncGroupResponseData syncError(Errors error) {
        return new SyncGroupResponseData().setErrorCode(error.code()).setAssignment(new byte[0]);
    }
}
