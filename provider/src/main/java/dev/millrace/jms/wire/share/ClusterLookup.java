package dev.millrace.jms.wire.share;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;

import dev.millrace.protocol.net.BrokerChannel;
import dev.millrace.protocol.net.ClientSecurity;
import io.netty.channel.EventLoop;

/**
 * Where the share-group client's requests go on a cluster: a channel to any broker of the bootstrap list, the group's
 * coordinator (FindCoordinator, key type GROUP, key the group id) and the leader of each partition of a topic, with
 * the topic id (Metadata; share requests name topics by id).
 *
 * <p>Stateless; the futures complete on the channel's event loop.
 */
public final class ClusterLookup {

    /** FindCoordinator's last version with a single key (the batched ones start at 4). */
    private static final short FIND_COORDINATOR_VERSION = 3;
    /** Metadata with topic ids. */
    private static final short METADATA_VERSION = 12;

    /** A broker: its node id and address ({@code host:port}). */
    public record Broker(int nodeId, String host, int port) {
        public String address() {
            return host + ":" + port;
        }
    }

    /** A topic's id and the leader of each of its partitions (a partition without a live leader is absent). */
    public record TopicRoutes(Uuid topicId, Map<Integer, Broker> leaders) {
    }

    /** Where the next {@link #connectAny} starts in its list. */
    private static final AtomicInteger NEXT_FIRST = new AtomicInteger();

    private ClusterLookup() {
    }

    /**
     * Connects to the first broker of {@code brokers} (comma-separated {@code host:port}) that answers, starting at a
     * different one on each call (round robin over the calls of this JVM): a caller that tries again after a
     * failure asks another broker first, so one broker that accepts connections but cannot help yet (a node still
     * starting closes them at the first request) does not hold every retry.
     */
    public static CompletableFuture<BrokerChannel> connectAny(EventLoop loop, String brokers, String clientId,
                                                              int timeoutMs, ClientSecurity security) {
        CompletableFuture<BrokerChannel> result = new CompletableFuture<>();
        String[] list = brokers.split(",");
        connectFrom(loop, list, Math.floorMod(NEXT_FIRST.getAndIncrement(), list.length), 0, clientId, timeoutMs,
                security, result);
        return result;
    }

    private static void connectFrom(EventLoop loop, String[] brokers, int first, int tried, String clientId,
                                    int timeoutMs, ClientSecurity security, CompletableFuture<BrokerChannel> result) {
        String broker = brokers[(first + tried) % brokers.length].trim();
        int colon = broker.lastIndexOf(':');
        String host = colon < 0 ? broker : broker.substring(0, colon);
        int port = colon < 0 ? 9092 : Integer.parseInt(broker.substring(colon + 1));
        connect(loop, host, port, clientId, timeoutMs, security).whenComplete((c, e) -> {
            if (e == null) {
                result.complete(c);
            } else if (tried + 1 < brokers.length) {
                connectFrom(loop, brokers, first, tried + 1, clientId, timeoutMs, security, result);
            } else {
                result.completeExceptionally(e);
            }
        });
    }

    /** Connects to one broker with {@code security} (TLS, SASL). */
    public static CompletableFuture<BrokerChannel> connect(EventLoop loop, String host, int port, String clientId,
                                                           int timeoutMs, ClientSecurity security) {
        return BrokerChannel.connect(loop, host, port, clientId, timeoutMs, security);
    }

    /**
     * The coordinator of share group {@code groupId}, asked of {@code via}; fails with an IOException naming the
     * broker's error (COORDINATOR_NOT_AVAILABLE while the group's partition has no leader: retried by the caller).
     */
    public static CompletableFuture<Broker> findCoordinator(BrokerChannel via, String groupId) {
        FindCoordinatorRequestData data = new FindCoordinatorRequestData().setKey(groupId)
                .setKeyType(FindCoordinatorRequest.CoordinatorType.GROUP.id());
        return via.<FindCoordinatorResponse>send(new FindCoordinatorRequest.Builder(data), FIND_COORDINATOR_VERSION)
                .thenApply(r -> {
                    Errors error = Errors.forCode(r.data().errorCode());
                    if (error != Errors.NONE) {
                        throw new java.util.concurrent.CompletionException(new IOException("FindCoordinator for "
                                + "share group " + groupId + " at " + via.address() + ": " + error.name()));
                    }
                    return new Broker(r.data().nodeId(), r.data().host(), r.data().port());
                });
    }

    /** The id of {@code topic} and its partitions' leaders, asked of {@code via}. */
    public static CompletableFuture<TopicRoutes> routes(BrokerChannel via, String topic) {
        MetadataRequestData data = new MetadataRequestData().setAllowAutoTopicCreation(false)
                .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName(topic)));
        return via.<MetadataResponse>send(new MetadataRequest.Builder(data), METADATA_VERSION).thenApply(r -> {
            Map<Integer, Broker> brokers = new HashMap<>();
            for (MetadataResponseData.MetadataResponseBroker b : r.data().brokers()) {
                brokers.put(b.nodeId(), new Broker(b.nodeId(), b.host(), b.port()));
            }
            for (MetadataResponseData.MetadataResponseTopic t : r.data().topics()) {
                if (!topic.equals(t.name())) {
                    continue;
                }
                Errors error = Errors.forCode(t.errorCode());
                if (error != Errors.NONE) {
                    throw new java.util.concurrent.CompletionException(new IOException("Metadata of " + topic
                            + " at " + via.address() + ": " + error.name()));
                }
                Map<Integer, Broker> leaders = new HashMap<>();
                for (MetadataResponseData.MetadataResponsePartition p : t.partitions()) {
                    Broker leader = brokers.get(p.leaderId());
                    if (leader != null) {
                        leaders.put(p.partitionIndex(), leader);
                    }
                }
                return new TopicRoutes(t.topicId(), Map.copyOf(leaders));
            }
            throw new java.util.concurrent.CompletionException(new IOException("Metadata of " + topic + " at "
                    + via.address() + " does not name the topic"));
        });
    }
}
