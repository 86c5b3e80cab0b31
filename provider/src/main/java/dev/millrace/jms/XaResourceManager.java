package dev.millrace.jms;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.millrace.jms.wire.XaRequests;
import dev.millrace.protocol.ext.XaXid;

/**
 * One Millrace cluster as an XA resource manager in this JVM (keyed by the cluster id): the branches its
 * XAResources work on ({@link XaBranch}, by Xid, so that an XAResource of another session or connection can join
 * one with {@code TMJOIN}), and the branches its last recover scans listed (for commit or rollback by a
 * transaction manager that knows only the Xid). Two XAResources are the same resource manager
 * ({@code isSameRM}) when they have the same instance.
 *
 * <p>Thread-safe.
 */
final class XaResourceManager {

    private static final Map<String, XaResourceManager> BY_CLUSTER = new ConcurrentHashMap<>();

    private final String clusterId;
    private final Map<XaXid, XaBranch> branches = new ConcurrentHashMap<>();
    private final Map<XaXid, XaRequests.Listed> listed = new ConcurrentHashMap<>();

    private XaResourceManager(String clusterId) {
        this.clusterId = clusterId;
    }

    static XaResourceManager forCluster(String clusterId) {
        return BY_CLUSTER.computeIfAbsent(clusterId, XaResourceManager::new);
    }

    String clusterId() {
        return clusterId;
    }

    XaBranch branch(XaXid xid) {
        return branches.get(xid);
    }

    /** Registers a new branch; false if the Xid already names one here. */
    boolean add(XaBranch branch) {
        return branches.putIfAbsent(branch.xid(), branch) == null;
    }

    /** The branch is over on the client (completed, rolled back, or read-only). */
    void forget(XaBranch branch) {
        branches.remove(branch.xid(), branch);
    }

    /** Replaces the listed branches with the result of a recover scan. */
    void listed(List<XaRequests.Listed> scan) {
        listed.clear();
        for (XaRequests.Listed l : scan) {
            listed.put(l.branch().xid(), l);
        }
    }

    XaRequests.Listed listed(XaXid xid) {
        return listed.get(xid);
    }

    void forgetListed(XaXid xid) {
        listed.remove(xid);
    }

    @Override
    public String toString() {
        return "Millrace cluster " + clusterId;
    }
}
