package dev.millrace.broker.server;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;
import dev.millrace.broker.replica.BrokerEndpoints;
import dev.millrace.broker.txn.TxnMarkerWriter;
import dev.millrace.protocol.net.BrokerChannel;
import dev.millrace.protocol.net.ClientSecurity;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;

/**
 * The transaction coordinator's marker writer in a cluster (and on one node, where every partition is local): each
 * partition's marker goes to the partition's leader as the metadata names it now, written directly by
 * {@link LocalTxnMarkerWriter} when that is this broker and sent as Kafka's WriteTxnMarkers (kafka-clients'
 * {@link WriteTxnMarkersRequest}, version 1, with the coordinator epoch) to the leader's listener otherwise, where
 * {@link WriteTxnMarkersHandler} answers once the marker is on the partition's in-sync replicas.
 *
 * <p>A partition whose marker failed (NOT_LEADER_OR_FOLLOWER, no leader, an unknown broker, a lost connection, the
 * replicas not catching up) is tried again after {@value #RETRY_BACKOFF_MS} ms with fresh metadata, until
 * {@code attemptTimeoutMs} has passed; then the call fails naming the partitions left and the last problem, and the
 * coordinator retries the whole set a second later (a marker written twice closes nothing the second time). A
 * partition whose topic no longer exists is skipped.
 *
 * <p>Threading: thread-safe. One connection per remote broker, kept while it works, on one event-loop thread owned by
 * this writer; futures complete on that thread or on the local partitions' replication threads.
 */
final class ClusterTxnMarkerWriter implements TxnMarkerWriter, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ClusterTxnMarkerWriter.class);
    private static final long RETRY_BACKOFF_MS = 100;
    /** WriteTxnMarkers version sent: 1, the first kafka-clients 4.x knows (2 adds the transaction version, 2+). */
    private static final short WRITE_TXN_MARKERS_VERSION = 1;

    private final int nodeId;
    private final Supplier<MetadataImage> metadata;
    private final ClientSecurity security;
    private final BrokerEndpoints endpoints;
    private final LocalTxnMarkerWriter local;
    private final long attemptTimeoutMs;
    private final int requestTimeoutMs;
    private final EventLoopGroup group;
    private final EventLoop loop;
    /** Connections by broker id; guarded by {@code this}. */
    private final Map<Integer, CompletableFuture<BrokerChannel>> channels = new HashMap<>();
    private volatile boolean closed;

    /**
     * @param attemptTimeoutMs how long one call keeps retrying the partitions whose marker failed
     * @param requestTimeoutMs how long a WriteTxnMarkers request may take (the remote leader waits for its ISR)
     */
    ClusterTxnMarkerWriter(int nodeId, Supplier<MetadataImage> metadata, BrokerEndpoints endpoints,
                           LocalTxnMarkerWriter local, long attemptTimeoutMs, int requestTimeoutMs,
                           ClientSecurity security) {
        this.security = security;
        this.nodeId = nodeId;
        this.metadata = metadata;
        this.endpoints = endpoints;
        this.local = local;
        this.attemptTimeoutMs = attemptTimeoutMs;
        this.requestTimeoutMs = requestTimeoutMs;
        this.group = new NioEventLoopGroup(1, r -> {
            Thread thread = new Thread(r, "millrace-txn-markers-" + nodeId);
            thread.setDaemon(true);
            return thread;
        });
        this.loop = group.next();
    }

    @Override
    public void writeMarkers(long producerId, short producerEpoch, boolean commit,
                             Collection<TopicPartition> partitions) {
        writeMarkers(producerId, producerEpoch, 0, commit, partitions).join();
    }

    @Override
    public CompletableFuture<Void> writeMarkers(long producerId, short producerEpoch, int coordinatorEpoch,
                                                boolean commit, Collection<TopicPartition> partitions) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        Marker marker = new Marker(producerId, producerEpoch, coordinatorEpoch, commit,
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(attemptTimeoutMs));
        attempt(marker, new LinkedHashSet<>(partitions), result, "no attempt yet");
        return result;
    }

    private record Marker(long producerId, short producerEpoch, int coordinatorEpoch, boolean commit, long deadline) {
    }

    private void attempt(Marker marker, Set<TopicPartition> remaining, CompletableFuture<Void> result,
                         String lastProblem) {
        if (closed) {
            result.completeExceptionally(new IllegalStateException("the broker is shutting down"));
            return;
        }
        if (System.nanoTime() - marker.deadline() > 0) {
            result.completeExceptionally(new TimeoutException("The " + (marker.commit() ? "commit" : "abort")
                    + " markers of producer " + marker.producerId() + " for " + remaining + " were not written within "
                    + attemptTimeoutMs + " ms; last problem: " + lastProblem));
            return;
        }
        MetadataImage image = metadata.get();
        Map<Integer, List<TopicPartition>> byLeader = new LinkedHashMap<>();
        Map<TopicPartition, Errors> failed = new LinkedHashMap<>();
        for (TopicPartition tp : remaining) {
            Optional<TopicImage> topic = image.topic(tp.topic());
            PartitionImage partition = topic.map(t -> t.partitions().get(tp.partition())).orElse(null);
            if (partition == null) {
                log.warn("Skipping the {} marker of producer {} for {}: the partition no longer exists",
                        marker.commit() ? "commit" : "abort", marker.producerId(), tp);
            } else if (partition.leader() < 0) {
                failed.put(tp, Errors.LEADER_NOT_AVAILABLE);
            } else {
                byLeader.computeIfAbsent(partition.leader(), l -> new ArrayList<>()).add(tp);
            }
        }
        List<CompletableFuture<Map<TopicPartition, Errors>>> sent = new ArrayList<>();
        byLeader.forEach((leader, partitions) -> sent.add(leader == nodeId
                ? local.write(marker.producerId(), marker.producerEpoch(), marker.coordinatorEpoch(), marker.commit(),
                        partitions)
                : sendTo(leader, marker, partitions)));
        CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> {
            sent.forEach(f -> f.join().forEach((tp, error) -> {
                if (error != Errors.NONE) {
                    failed.put(tp, error);
                }
            }));
            if (failed.isEmpty()) {
                result.complete(null);
                return;
            }
            String problem = failed.toString();
            log.debug("Markers of producer {} failed for {}; retrying", marker.producerId(), problem);
            try {
                loop.schedule(() -> attempt(marker, new LinkedHashSet<>(failed.keySet()), result, problem),
                        RETRY_BACKOFF_MS, TimeUnit.MILLISECONDS);
            } catch (RuntimeException rejected) {
                result.completeExceptionally(new IllegalStateException("the broker is shutting down"));
            }
        });
    }

    /** Sends the markers of {@code partitions} to {@code leader}; never completes exceptionally. */
    private CompletableFuture<Map<TopicPartition, Errors>> sendTo(int leader, Marker marker,
                                                                  List<TopicPartition> partitions) {
        Optional<InetSocketAddress> address = endpoints.endpoint(leader);
        if (address.isEmpty()) {
            return CompletableFuture.completedFuture(all(partitions, Errors.BROKER_NOT_AVAILABLE));
        }
        WriteTxnMarkersRequest.TxnMarkerEntry entry = new WriteTxnMarkersRequest.TxnMarkerEntry(marker.producerId(),
                marker.producerEpoch(), marker.coordinatorEpoch(),
                marker.commit() ? TransactionResult.COMMIT : TransactionResult.ABORT, partitions, (short) 0);
        return channel(leader, address.get())
                .thenCompose(ch -> ch.<WriteTxnMarkersResponse>send(new WriteTxnMarkersRequest.Builder(List.of(entry)),
                        WRITE_TXN_MARKERS_VERSION))
                .handle((response, error) -> {
                    if (error != null) {
                        log.debug("WriteTxnMarkers to broker {} failed: {}", leader, error.toString());
                        dropChannel(leader);
                        return all(partitions, Errors.NETWORK_EXCEPTION);
                    }
                    Map<TopicPartition, Errors> answered = response.errorsByProducerId()
                            .getOrDefault(marker.producerId(), Map.of());
                    Map<TopicPartition, Errors> out = new LinkedHashMap<>();
                    partitions.forEach(tp -> out.put(tp, answered.getOrDefault(tp, Errors.UNKNOWN_SERVER_ERROR)));
                    return out;
                });
    }

    private static Map<TopicPartition, Errors> all(List<TopicPartition> partitions, Errors error) {
        Map<TopicPartition, Errors> out = new LinkedHashMap<>();
        partitions.forEach(tp -> out.put(tp, error));
        return out;
    }

    private synchronized CompletableFuture<BrokerChannel> channel(int broker, InetSocketAddress address) {
        CompletableFuture<BrokerChannel> current = channels.get(broker);
        boolean usable = current != null && (!current.isDone() || !current.isCompletedExceptionally()
                && current.join().isOpen() && current.join().address().equals(address.getHostString() + ":"
                + address.getPort()));
        if (!usable) {
            if (current != null && current.isDone() && !current.isCompletedExceptionally()) {
                current.join().close();
            }
            current = BrokerChannel.connect(loop, address.getHostString(), address.getPort(),
                    "millrace-txn-markers-" + nodeId, requestTimeoutMs, security);
            channels.put(broker, current);
        }
        return current;
    }

    private synchronized void dropChannel(int broker) {
        CompletableFuture<BrokerChannel> current = channels.remove(broker);
        if (current != null) {
            current.thenAccept(BrokerChannel::close);
        }
    }

    /** Closes the connections; calls in progress fail. Idempotent. */
    @Override
    public void close() {
        closed = true;
        synchronized (this) {
            channels.values().forEach(c -> c.thenAccept(BrokerChannel::close));
            channels.clear();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
