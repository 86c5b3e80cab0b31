package dev.millrace.broker.replica;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.TopicPartition;

import dev.millrace.protocol.net.ClientSecurity;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The follower side of replication on one broker: one {@link ReplicaFetcher} per leader broker this broker follows
 * partitions of, each with one connection, on a small Netty event loop group that this manager owns (created at the
 * first follower partition, so a broker that follows nothing starts no thread; shut down by {@link #close}).
 *
 * <p>Thread-safe: the methods are synchronized; each fetcher works on its own event loop.
 */
public final class ReplicaFetcherManager implements AutoCloseable {

    private static final int LOOP_THREADS = 2;

    private final int nodeId;
    private final ReplicaConfig config;
    private final BrokerEndpoints endpoints;
    private final ClientSecurity security;
    private final Map<Integer, ReplicaFetcher> fetchers = new HashMap<>();
    /** Which fetcher (leader broker) each followed partition is with. */
    private final Map<TopicPartition, Integer> sources = new HashMap<>();
    private EventLoopGroup group;
    private boolean closed;

    public ReplicaFetcherManager(int nodeId, ReplicaConfig config, BrokerEndpoints endpoints) {
        this(nodeId, config, endpoints, ClientSecurity.PLAINTEXT);
    }

    /** @param security how to connect to the leaders (the inter-broker listener's protocol) */
    public ReplicaFetcherManager(int nodeId, ReplicaConfig config, BrokerEndpoints endpoints,
                                 ClientSecurity security) {
        this.security = security;
        this.nodeId = nodeId;
        this.config = config;
        this.endpoints = endpoints;
    }

    /**
     * Starts fetching {@code partition} from {@code leaderId} in {@code leaderEpoch} (moving it from another leader's
     * fetcher if needed). The fetcher first truncates the partition's log to where it agrees with the leader.
     */
    public synchronized void follow(FollowerPartition partition, int leaderId, int leaderEpoch) {
        if (closed) {
            return;
        }
        stopFollowing(partition.topicPartition());
        if (group == null) {
            group = new NioEventLoopGroup(LOOP_THREADS, new DefaultThreadFactory("millrace-replica-fetcher", true));
        }
        ReplicaFetcher fetcher = fetchers.computeIfAbsent(leaderId,
                id -> new ReplicaFetcher(nodeId, id, config, endpoints, security, group.next()));
        fetcher.add(partition, leaderEpoch);
        sources.put(partition.topicPartition(), leaderId);
    }

    /** Stops fetching {@code tp}; a fetcher left without partitions closes its connection. */
    public synchronized void stopFollowing(TopicPartition tp) {
        Integer source = sources.remove(tp);
        if (source == null) {
            return;
        }
        ReplicaFetcher fetcher = fetchers.get(source);
        if (!sources.containsValue(source)) {
            fetchers.remove(source);
            fetcher.close();
        } else {
            fetcher.remove(tp);
        }
    }

    /** How many leader brokers this broker fetches from (for tests). */
    public synchronized int fetcherCount() {
        return fetchers.size();
    }

    /** Stops every fetcher and the event loop group; waits for the group to end. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        fetchers.values().forEach(ReplicaFetcher::close);
        fetchers.clear();
        sources.clear();
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }
}
