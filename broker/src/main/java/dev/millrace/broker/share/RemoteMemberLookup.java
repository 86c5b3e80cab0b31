package dev.millrace.broker.share;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.utils.Utils;

import dev.millrace.broker.coordinator.CoordinatorLocator;
import dev.millrace.protocol.ext.ShareMember;
import dev.millrace.protocol.net.ClientSecurity;

/**
 * Asks a share group's coordinator, on another broker, about one member (the ShareMember extension): the coordinator
 * is the leader of the group's partition of {@code __consumer_offsets} ({@code Utils.abs(groupId.hashCode()) %
 * partitions}, as FindCoordinator answers), found in the latest metadata at each lookup, so a coordinator that moved
 * is found at its new broker. One connection per broker, of its own ({@link ShareStateClient}).
 *
 * <p>Thread-safe; futures complete on the client's event loop.
 */
final class RemoteMemberLookup implements RemoteMemberCache.Lookup, AutoCloseable {

    private final CoordinatorLocator offsetsLeaders;
    private final int offsetsPartitions;
    private final int nodeId;
    private final ShareStateClient client;

    RemoteMemberLookup(CoordinatorLocator offsetsLeaders, int offsetsPartitions, int nodeId, int timeoutMs,
                       ClientSecurity security) {
        this.offsetsLeaders = Objects.requireNonNull(offsetsLeaders, "offsetsLeaders");
        if (offsetsPartitions < 1) {
            throw new IllegalArgumentException("__consumer_offsets must have at least one partition, got "
                    + offsetsPartitions);
        }
        this.offsetsPartitions = offsetsPartitions;
        this.nodeId = nodeId;
        this.client = new ShareStateClient(nodeId, timeoutMs, "share-member", security);
    }

    @Override
    public CompletableFuture<ShareMember.Response> lookUp(String groupId, String memberId) {
        int partition = Utils.abs(groupId.hashCode()) % offsetsPartitions;
        Optional<Node> leader = offsetsLeaders.leaderOf(partition);
        if (leader.isEmpty()) {
            return CompletableFuture.failedFuture(new CoordinatorNotAvailableException("__consumer_offsets-"
                    + partition + ", the coordinator partition of share group " + groupId + ", has no leader"));
        }
        if (leader.get().id() == nodeId) {
            // elected here, not serving yet: the local coordinator answers once the election reached it
            return CompletableFuture.failedFuture(new NotCoordinatorException("share group " + groupId
                    + " is coordinated here but not served yet"));
        }
        return client.send(leader.get(), new ShareMember.Request(groupId, memberId));
    }

    @Override
    public void close() {
        client.close();
    }
}
