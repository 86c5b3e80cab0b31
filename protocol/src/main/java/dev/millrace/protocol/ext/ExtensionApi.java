package dev.millrace.protocol.ext;

import java.util.Optional;

/**
 * The Millrace extension APIs, their keys and the versions this library speaks. Keys lie in the reserved range
 * {@value #FIRST_KEY}..{@value #LAST_KEY}, far above Kafka's own keys (which stay below 100).
 *
 * <table>
 *   <caption>Extension APIs</caption>
 *   <tr><th>key</th><th>name</th><th>versions</th><th>what for</th></tr>
 *   <tr><td>30000</td><td>ShareBrowse</td><td>0</td><td>read a share-partition's undelivered and in-flight
 *       records without acquiring them ({@link ShareBrowse})</td></tr>
 *   <tr><td>30001</td><td>TxnShareAcknowledge</td><td>1</td><td>accept acquired records as part of an open
 *       transaction: they are accepted by its commit, released by its abort ({@link TxnShareAcknowledge})</td></tr>
 *   <tr><td>30002</td><td>ShareSettle</td><td>0</td><td>settle (accept, release, reject, renew, return unread)
 *       records a member holds, outside its share session ({@link ShareSettle})</td></tr>
 *   <tr><td>30005</td><td>ShareState</td><td>0</td><td>broker to broker: read and write share-partition state at
 *       the share-state coordinator of its group ({@link ShareState})</td></tr>
 *   <tr><td>30006</td><td>ShareMember</td><td>0</td><td>broker to broker: a share-partition leader asks a share
 *       group's coordinator for a member's rack id, which carries its JMS selector ({@link ShareMember})</td></tr>
 *   <tr><td>30007</td><td>TxnAddSharePartition</td><td>0</td><td>broker to broker: a share-partition leader asks a
 *       transaction's coordinator to add the partition to the Ongoing transaction, for TxnShareAcknowledge
 *       ({@link TxnAddSharePartition})</td></tr>
 *   <tr><td>30020</td><td>XaPrepare</td><td>0</td><td>XA phase one: make a transactional id's Ongoing transaction a
 *       durable prepared branch named by its Xid ({@link XaPrepare})</td></tr>
 *   <tr><td>30021</td><td>XaComplete</td><td>0</td><td>XA phase two: commit, roll back or forget a branch by Xid,
 *       from any connection; by hand for administrators ({@link XaComplete})</td></tr>
 *   <tr><td>30022</td><td>XaRecover</td><td>0</td><td>list the XA branches (in doubt, completing, heuristically
 *       completed) of a broker's transaction coordinators, with their age ({@link XaRecover})</td></tr>
 * </table>
 * Keys 30020..30029 are XA's.
 */
public enum ExtensionApi {

    SHARE_BROWSE((short) 30000, "ShareBrowse", (short) 0, (short) 0),
    TXN_SHARE_ACKNOWLEDGE((short) 30001, "TxnShareAcknowledge", (short) 1, (short) 1),
    SHARE_SETTLE((short) 30002, "ShareSettle", (short) 0, (short) 0),
    SHARE_STATE((short) 30005, "ShareState", (short) 0, (short) 0),
    SHARE_MEMBER((short) 30006, "ShareMember", (short) 0, (short) 0),
    TXN_ADD_SHARE_PARTITION((short) 30007, "TxnAddSharePartition", (short) 0, (short) 0),
    XA_PREPARE((short) 30020, "XaPrepare", (short) 0, (short) 0),
    XA_COMPLETE((short) 30021, "XaComplete", (short) 0, (short) 0),
    XA_RECOVER((short) 30022, "XaRecover", (short) 0, (short) 0);

    public static final int FIRST_KEY = 30000;
    public static final int LAST_KEY = 30099;

    private final short key;
    private final String displayName;
    private final short minVersion;
    private final short maxVersion;

    ExtensionApi(short key, String displayName, short minVersion, short maxVersion) {
        this.key = key;
        this.displayName = displayName;
        this.minVersion = minVersion;
        this.maxVersion = maxVersion;
    }

    public short key() {
        return key;
    }

    public String displayName() {
        return displayName;
    }

    public short minVersion() {
        return minVersion;
    }

    public short maxVersion() {
        return maxVersion;
    }

    /** Whether {@code apiKey} lies in the reserved range (whether or not an API is defined there). */
    public static boolean isReserved(short apiKey) {
        return apiKey >= FIRST_KEY && apiKey <= LAST_KEY;
    }

    public static Optional<ExtensionApi> forKey(short apiKey) {
        for (ExtensionApi api : values()) {
            if (api.key == apiKey) {
                return Optional.of(api);
            }
        }
        return Optional.empty();
    }
}
