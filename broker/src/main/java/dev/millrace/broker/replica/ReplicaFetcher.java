package dev.millrace.broker.replica;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderPartition;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderTopic;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.protocol.net.BrokerChannel;
import dev.millrace.protocol.net.ClientSecurity;
import io.netty.channel.EventLoop;

/**
 * Fetches every partition this broker follows from one leader broker, over one {@link BrokerChannel}, one request
 * at a time: Kafka's Fetch with this broker's id as the replica id (v12, the last version naming topics; the leader
 * parks it up to {@code replica.fetch.wait.max.ms}), and before that, for a partition that has just started following
 * or was told its offset or epoch is wrong, OffsetsForLeaderEpoch to find where to truncate
 * ({@link FollowerTruncation}).
 *
 * <pre>
 *   add(partition, epoch) ─▶ [truncating] ──OffsetsForLeaderEpoch──▶ [fetching] ──Fetch──▶ append, follower HW
 *                                 ▲                                       │
 *                                 └──── OFFSET_OUT_OF_RANGE, FENCED ──────┘   other errors: back off, retry
 * </pre>
 *
 * A partition always fetches from its own log end. Responses are applied only if the partition still follows the
 * same leader epoch and its log end has not moved since the request (the partition refuses otherwise). A partition
 * with an error backs off for {@code replica.fetch.backoff.ms}; a failed connection backs off every partition and
 * reconnects.
 *
 * <p>Threading: confined to one event loop; {@link #add}, {@link #remove} and {@link #close} hand their work to it.
 */
final class ReplicaFetcher {

    private static final Logger log = LoggerFactory.getLogger(ReplicaFetcher.class);

    /** The highest Fetch version the broker serves (KafkaApis.VERSIONS) and the last with topic names. */
    static final short FETCH_VERSION = 12;
    static final short EPOCH_VERSION = ApiKeys.OFFSET_FOR_LEADER_EPOCH.latestVersion();

    /** One followed partition. Event loop only. */
    private static final class Fetching {
        final FollowerPartition partition;
        final int leaderEpoch;
        boolean truncating;
        long delayedUntilNs;

        Fetching(FollowerPartition partition, int leaderEpoch) {
            this.partition = partition;
            this.leaderEpoch = leaderEpoch;
            this.truncating = partition.epochs().isPresent();
        }

        boolean ready(long nowNs) {
            return nowNs - delayedUntilNs >= 0;
        }
    }

    private final int nodeId;
    private final int sourceId;
    private final ReplicaConfig config;
    private final BrokerEndpoints endpoints;
    private final ClientSecurity security;
    private final EventLoop loop;
    private final Map<TopicPartition, Fetching> partitions = new LinkedHashMap<>();
    private BrokerChannel channel;
    private boolean inFlight;
    private boolean closed;
    private ScheduledFuture<?> wakeup;

    ReplicaFetcher(int nodeId, int sourceId, ReplicaConfig config, BrokerEndpoints endpoints,
                   ClientSecurity security, EventLoop loop) {
        this.security = security;
        this.nodeId = nodeId;
        this.sourceId = sourceId;
        this.config = config;
        this.endpoints = endpoints;
        this.loop = loop;
    }

    void add(FollowerPartition partition, int leaderEpoch) {
        run(() -> {
            partitions.put(partition.topicPartition(), new Fetching(partition, leaderEpoch));
            maybeSend();
        });
    }

    void remove(TopicPartition tp) {
        run(() -> partitions.remove(tp));
    }

    void close() {
        run(() -> {
            closed = true;
            partitions.clear();
            if (wakeup != null) {
                wakeup.cancel(false);
            }
            if (channel != null) {
                channel.close();
            }
        });
    }

    private void run(Runnable task) {
        try {
            loop.execute(task);
        } catch (RejectedExecutionException e) {
            // the manager is closing
        }
    }

    private void maybeSend() {
        if (closed || inFlight || partitions.isEmpty()) {
            return;
        }
        if (channel == null || !channel.isOpen()) {
            connect();
            return;
        }
        long nowNs = System.nanoTime();
        List<Fetching> truncating = new ArrayList<>();
        List<Fetching> fetching = new ArrayList<>();
        long nextReadyNs = Long.MAX_VALUE;
        for (Fetching f : partitions.values()) {
            if (!f.ready(nowNs)) {
                nextReadyNs = Math.min(nextReadyNs, f.delayedUntilNs);
            } else if (f.truncating) {
                truncating.add(f);
            } else {
                fetching.add(f);
            }
        }
        if (!truncating.isEmpty()) {
            sendEpochRequest(truncating);
        } else if (!fetching.isEmpty()) {
            sendFetch(fetching);
        } else {
            wakeUpIn(nextReadyNs - nowNs);
        }
    }

    private void wakeUpIn(long delayNs) {
        if (wakeup != null && !wakeup.isDone()) {
            wakeup.cancel(false);
        }
        wakeup = loop.schedule(() -> {
            wakeup = null;
            maybeSend();
        }, Math.max(0, delayNs), TimeUnit.NANOSECONDS);
    }

    private void connect() {
        Optional<InetSocketAddress> address = endpoints.endpoint(sourceId);
        if (address.isEmpty()) {
            log.debug("Broker {}: no endpoint known for leader {} yet", nodeId, sourceId);
            backOffAll();
            return;
        }
        inFlight = true;
        BrokerChannel.connect(loop, address.get().getHostString(), address.get().getPort(),
                "millrace-replica-fetcher-" + nodeId, config.requestTimeoutMs(), security).whenComplete((c, error) -> {
                    inFlight = false;
                    if (closed) {
                        if (c != null) {
                            c.close();
                        }
                        return;
                    }
                    if (error != null) {
                        if (refused(error)) {
                            // a wrong inter-broker password or certificate: nothing replicates until it is fixed
                            log.warn("Broker {}: leader {} refused this node's credentials (inter-broker listener "
                                    + "security): {}", nodeId, sourceId, error.getMessage());
                        } else {
                            log.info("Broker {}: cannot reach leader {}: {}", nodeId, sourceId, error.getMessage());
                        }
                        backOffAll();
                        return;
                    }
                    channel = c;
                    maybeSend();
                });
    }

    private static boolean refused(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof org.apache.kafka.common.errors.AuthenticationException) {
                return true;
            }
        }
        return false;
    }

    private void backOffAll() {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.replicaFetchBackoffMs());
        partitions.values().forEach(f -> f.delayedUntilNs = until);
        if (channel != null) {
            channel.close();
            channel = null;
        }
        wakeUpIn(TimeUnit.MILLISECONDS.toNanos(config.replicaFetchBackoffMs()));
    }

    private void backOff(Fetching f) {
        f.delayedUntilNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.replicaFetchBackoffMs());
    }

    // ---- Fetch

    private record Sent(int leaderEpoch, long fetchOffset) {
    }

    private void sendFetch(List<Fetching> ready) {
        Map<TopicPartition, FetchRequest.PartitionData> data = new LinkedHashMap<>();
        Map<TopicPartition, Sent> sent = new LinkedHashMap<>();
        for (Fetching f : ready) {
            FollowerPartition p = f.partition;
            long offset = p.logEndOffset();
            data.put(p.topicPartition(), new FetchRequest.PartitionData(p.topicId(), offset, p.logStartOffset(),
                    config.replicaFetchMaxBytes(), Optional.of(f.leaderEpoch), Optional.empty()));
            sent.put(p.topicPartition(), new Sent(f.leaderEpoch, offset));
        }
        FetchRequest.Builder request = FetchRequest.Builder.forReplica(FETCH_VERSION, nodeId, -1L,
                config.replicaFetchWaitMaxMs(), 1, data).setMaxBytes(config.replicaFetchResponseMaxBytes());
        inFlight = true;
        channel.<FetchResponse>send(request, FETCH_VERSION).whenComplete((response, error) -> {
            inFlight = false;
            if (closed) {
                return;
            }
            if (error != null) {
                log.info("Broker {}: fetch from leader {} failed: {}", nodeId, sourceId, error.getMessage());
                backOffAll();
                return;
            }
            onFetchResponse(response, sent);
            maybeSend();
        });
    }

    private void onFetchResponse(FetchResponse response, Map<TopicPartition, Sent> sent) {
        if (response.error() != Errors.NONE) {
            log.info("Broker {}: leader {} answered the fetch with {}", nodeId, sourceId, response.error());
            backOffAll();
            return;
        }
        for (FetchResponseData.FetchableTopicResponse topic : response.data().responses()) {
            for (FetchResponseData.PartitionData p : topic.partitions()) {
                TopicPartition tp = new TopicPartition(topic.topic(), p.partitionIndex());
                Fetching f = partitions.get(tp);
                Sent s = sent.get(tp);
                if (f == null || s == null || f.leaderEpoch != s.leaderEpoch || f.truncating) {
                    continue;
                }
                try {
                    onPartitionData(f, s, p);
                } catch (RuntimeException e) {
                    log.warn("Broker {}: cannot apply the data of {} from leader {} at offset {}; truncating again",
                            nodeId, tp, sourceId, s.fetchOffset, e);
                    f.truncating = f.partition.epochs().isPresent();
                    backOff(f);
                }
            }
        }
    }

    private void onPartitionData(Fetching f, Sent s, FetchResponseData.PartitionData p) {
        FollowerPartition partition = f.partition;
        Errors error = Errors.forCode(p.errorCode());
        switch (error) {
            case NONE -> {
                if (partition.logEndOffset() != s.fetchOffset) {
                    return; // the log moved (truncated) while the fetch was out
                }
                MemoryRecords records = wholeBatches((MemoryRecords) p.records());
                if (records.sizeInBytes() > 0 && !partition.appendAsFollower(records, f.leaderEpoch)) {
                    partitions.remove(partition.topicPartition());
                    return;
                }
                partition.onLeaderProgress(p.highWatermark(), p.logStartOffset(), f.leaderEpoch);
            }
            case OFFSET_OUT_OF_RANGE -> onOutOfRange(f, p);
            case FENCED_LEADER_EPOCH -> {
                // this broker's epoch is older than the leader's: the new metadata will re-add the partition
                f.truncating = partition.epochs().isPresent();
                backOff(f);
            }
            default -> {
                log.debug("Broker {}: leader {} answered {} for {}", nodeId, sourceId, error,
                        partition.topicPartition());
                backOff(f);
            }
        }
    }

    /**
     * The leader cannot serve this offset: when its log starts above this log's end, this log starts over at the
     * leader's log start; otherwise this log ends above the leader's and truncates first.
     */
    private void onOutOfRange(Fetching f, FetchResponseData.PartitionData p) {
        FollowerPartition partition = f.partition;
        if (partition.epochs().isEmpty()) {
            log.warn("Broker {}: {} is out of range at leader {} and truncation is not available", nodeId,
                    partition.topicPartition(), sourceId);
            backOff(f);
            return;
        }
        long leaderLogStart = p.logStartOffset();
        if (leaderLogStart > partition.logEndOffset()) {
            log.info("Broker {}: {} starts over at the leader's log start {}", nodeId, partition.topicPartition(),
                    leaderLogStart);
            partition.truncate(f.leaderEpoch, epochLog -> epochLog.truncateFullyAndStartAt(leaderLogStart));
        } else {
            f.truncating = true;
        }
    }

    /** {@code records} without a trailing partial batch (a leader may cut the last batch at its byte limit). */
    static MemoryRecords wholeBatches(MemoryRecords records) {
        int whole = 0;
        for (RecordBatch batch : records.batches()) {
            whole += batch.sizeInBytes();
        }
        if (whole == records.sizeInBytes()) {
            return records;
        }
        ByteBuffer buffer = records.buffer().duplicate();
        buffer.limit(buffer.position() + whole);
        return MemoryRecords.readableRecords(buffer.slice());
    }

    // ---- OffsetsForLeaderEpoch

    private void sendEpochRequest(List<Fetching> truncating) {
        OffsetForLeaderTopicCollection topics = new OffsetForLeaderTopicCollection();
        Map<TopicPartition, Sent> sent = new LinkedHashMap<>();
        for (Fetching f : truncating) {
            EpochLog epochs = f.partition.epochs().orElseThrow();
            OptionalInt latest = epochs.latestEpoch();
            TopicPartition tp = f.partition.topicPartition();
            if (latest.isEmpty()) {
                // no epoch in this log: nothing to compare, keep what was committed
                f.partition.truncate(f.leaderEpoch, epochLog -> FollowerTruncation.apply(epochLog,
                        f.partition.logEndOffset(), f.partition.highWatermark(), EpochEnd.UNDEFINED));
                f.truncating = false;
                continue;
            }
            OffsetForLeaderTopic topic = topics.find(tp.topic());
            if (topic == null) {
                topic = new OffsetForLeaderTopic().setTopic(tp.topic());
                topics.add(topic);
            }
            topic.partitions().add(new OffsetForLeaderPartition().setPartition(tp.partition())
                    .setCurrentLeaderEpoch(f.leaderEpoch).setLeaderEpoch(latest.getAsInt()));
            sent.put(tp, new Sent(f.leaderEpoch, f.partition.logEndOffset()));
        }
        if (sent.isEmpty()) {
            maybeSend();
            return;
        }
        inFlight = true;
        channel.<OffsetsForLeaderEpochResponse>send(OffsetsForLeaderEpochRequest.Builder.forFollower(topics, nodeId),
                EPOCH_VERSION).whenComplete((response, error) -> {
                    inFlight = false;
                    if (closed) {
                        return;
                    }
                    if (error != null) {
                        log.info("Broker {}: OffsetsForLeaderEpoch to leader {} failed: {}", nodeId, sourceId,
                                error.getMessage());
                        backOffAll();
                        return;
                    }
                    onEpochResponse(response, sent);
                    maybeSend();
                });
    }

    private void onEpochResponse(OffsetsForLeaderEpochResponse response, Map<TopicPartition, Sent> sent) {
        for (OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult topic : response.data().topics()) {
            for (OffsetForLeaderEpochResponseData.EpochEndOffset p : topic.partitions()) {
                TopicPartition tp = new TopicPartition(topic.topic(), p.partition());
                Fetching f = partitions.get(tp);
                Sent s = sent.get(tp);
                if (f == null || s == null || f.leaderEpoch != s.leaderEpoch || !f.truncating) {
                    continue;
                }
                Errors error = Errors.forCode(p.errorCode());
                if (error != Errors.NONE) {
                    log.debug("Broker {}: leader {} answered OffsetsForLeaderEpoch for {} with {}", nodeId, sourceId,
                            tp, error);
                    backOff(f);
                    continue;
                }
                EpochEnd answer = new EpochEnd(p.leaderEpoch(), p.endOffset());
                boolean[] done = {false};
                boolean applied = f.partition.truncate(f.leaderEpoch, epochLog -> done[0] = FollowerTruncation.apply(
                        epochLog, f.partition.logEndOffset(), f.partition.highWatermark(), answer));
                if (!applied) {
                    partitions.remove(tp);
                } else if (done[0]) {
                    f.truncating = false;
                    log.info("Broker {}: {} truncated to {} for leader {} in epoch {}", nodeId, tp,
                            f.partition.logEndOffset(), sourceId, f.leaderEpoch);
                }
            }
        }
    }
}
