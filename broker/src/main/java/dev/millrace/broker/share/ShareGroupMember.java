package dev.millrace.broker.share;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.Uuid;

import dev.millrace.delay.TimerTask;

/**
 * One member of a share group, as its heartbeats describe it. Guarded by the
 * {@link ShareGroupCoordinator}'s monitor; not thread-safe on its own.
 */
final class ShareGroupMember {

    final String memberId;
    final String clientId;
    final String clientHost;
    String rackId;
    /**
     * The JMS selector carried by the rack id ({@link dev.millrace.protocol.selector.MemberSelector}), or null: the
     * member acquires only records it matches.
     */
    MemberFilter filter;
    int memberEpoch;
    List<String> subscribedTopics = List.of();
    Map<Uuid, Set<Integer>> assignment = Map.of();
    /** The pending session timeout; replaced on every heartbeat. */
    TimerTask sessionTimeout;

    ShareGroupMember(String memberId, String clientId, String clientHost) {
        this.memberId = memberId;
        this.clientId = clientId;
        this.clientHost = clientHost;
    }
}
