package dev.millrace.jms.wire;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.apache.kafka.common.requests.ShareRequestMetadata;

import dev.millrace.jms.wire.share.ClusterLookup;
import dev.millrace.protocol.ext.ShareSettle;
import dev.millrace.protocol.net.BrokerChannel;

/**
 * One partition leader of a queue consumer ({@link ShareFetcher}): the consumer's two channels to it (a long-polling
 * fetch channel and one for settlements, on the consumer's event loop) and its share session (KIP-932 sessions are
 * per broker).
 *
 * <p>Not thread-safe: the consumer's event loop only.
 */
final class ShareLeader {
    final ClusterLookup.Broker broker;
    /** The assigned partitions fetched from this leader. */
    final Set<Integer> partitions = new TreeSet<>();
    BrokerChannel fetch;
    BrokerChannel settle;
    boolean fetchInFlight;
    /** Orphaned records are being returned to it: it is not fetched from until the answer is in. */
    boolean returning;
    /** The acknowledgements riding on the fetch in flight (sent again through the settle channel on close). */
    List<ShareSettle.PartitionBatches> riding = List.of();
    int sessionEpoch = ShareRequestMetadata.INITIAL_EPOCH;

    ShareLeader(ClusterLookup.Broker broker) {
        this.broker = broker;
    }

    /** Whether settlements can go to it now (its fetch channel is closed first on close). */
    boolean connected() {
        return settle != null && settle.isOpen();
    }

    /** Whether it was connected and one of its channels has closed since (not while still connecting). */
    boolean disconnected() {
        return fetch != null && (!fetch.isOpen() || !connected());
    }

    void close() {
        if (fetch != null) {
            fetch.close();
        }
        if (settle != null) {
            settle.close();
        }
        fetch = null;
        settle = null;
    }
}
