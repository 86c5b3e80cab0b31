package dev.millrace.broker.share;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareRequestMetadata;

/**
 * Share sessions (KIP-932): per (group, member), the partitions a member fetches, so that later
 * requests name only what changed. The request's session epoch drives it:
 *
 * <pre>
 *   epoch 0   open a session (replacing the member's previous one) with the request's partitions
 *   epoch n   continue: n must be the epoch the session expects (else INVALID_SHARE_SESSION_EPOCH;
 *             no session: SHARE_SESSION_NOT_FOUND); add the request's partitions, drop the forgotten
 *   epoch -1  close the session after this request (acknowledgements only)
 * </pre>
 *
 * <p>Threading: thread-safe; every method is synchronized.
 */
public final class ShareSessionCache {

    /** A member's session: its partitions, in the order they were added. */
    public static final class Session {
        private final Set<TopicIdPartition> partitions = new LinkedHashSet<>();
        private int nextEpoch = 1;

        /** A copy of the session's partitions. */
        public synchronized List<TopicIdPartition> partitions() {
            return new ArrayList<>(partitions);
        }
    }

    /** The outcome of one request: the session to serve it from, or the error to answer with. */
    public record Result(Errors error, Session session) {
    }

    private record Key(String groupId, String memberId) {
    }

    private final Map<Key, Session> sessions = new HashMap<>();

    /**
     * Opens or continues the member's session for a request with {@code epoch}, adding
     * {@code added} and removing {@code forgotten}. A final epoch (-1) finds the session without
     * changing it; {@link #close} removes it once the request is served.
     */
    public synchronized Result update(String groupId, String memberId, int epoch, Collection<TopicIdPartition> added,
                                      Collection<TopicIdPartition> forgotten) {
        Key key = new Key(groupId, memberId);
        if (epoch == ShareRequestMetadata.INITIAL_EPOCH) {
            Session session = new Session();
            session.partitions.addAll(added);
            sessions.put(key, session);
            return new Result(Errors.NONE, session);
        }
        Session session = sessions.get(key);
        if (session == null) {
            return new Result(Errors.SHARE_SESSION_NOT_FOUND, null);
        }
        if (epoch == ShareRequestMetadata.FINAL_EPOCH) {
            return new Result(Errors.NONE, session);
        }
        if (epoch != session.nextEpoch) {
            return new Result(Errors.INVALID_SHARE_SESSION_EPOCH, null);
        }
        session.nextEpoch = ShareRequestMetadata.nextEpoch(epoch);
        synchronized (session) {
            session.partitions.removeAll(forgotten);
            session.partitions.addAll(added);
        }
        return new Result(Errors.NONE, session);
    }

    /** Removes the member's session. */
    public synchronized void close(String groupId, String memberId) {
        sessions.remove(new Key(groupId, memberId));
    }
}
