package dev.millrace.jms.wire;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.apache.kafka.common.requests.ShareRequestMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.JmsExceptions;
import dev.millrace.protocol.net.BrokerChannel;
import dev.millrace.jms.wire.net.ClientEventLoops;
import dev.millrace.jms.wire.failover.RetryWindow;
import dev.millrace.jms.wire.share.AcquiredRecords;
import dev.millrace.jms.wire.share.ClusterLookup;
import dev.millrace.jms.wire.share.ReadAheadWindow;
import dev.millrace.jms.wire.share.SettleBatches;
import dev.millrace.jms.wire.share.ShareMembership;
import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ShareSettle;
import jakarta.jms.JMSException;

/**
 * A JMS consumer of a queue (or shared subscription) as a member of its share group, on Millrace's own share-group
 * client (KIP-932 with kafka-clients' message classes, plus the ShareSettle extension): no thread of its own, two
 * sockets on a shared event loop ({@link ClientEventLoops}).
 *
 * <pre>
 *   fetch channel:   ShareFetch (long poll, with piggy-backed acceptances when one is due anyway)
 *   control channel: ShareGroupHeartbeat, ShareSettle (accept, release, renew, return, gap; never parked)
 *   application:     take() from the buffer; acknowledge / release / acceptInTransaction
 * </pre>
 *
 * <h2>Window and settlement</h2>
 * The consumer acquires ahead of the application up to {@code prefetch} records (and {@code prefetchBytes} per
 * fetch) that the application has not taken yet, fewer for an application too slow to take them within a quarter of
 * the record lock duration ({@link ReadAheadWindow}), and fetches again when its buffer is empty or half the window
 * is free ({@link #refillAt}; not after each record taken: a fetch of one record costs a round trip and a broker
 * state save like a fetch of hundreds). Records handed to the application do not count against the window:
 * it may hold any number of them unacknowledged (CLIENT_ACKNOWLEDGE, transactions), up to the broker's in-flight
 * limit {@code group.share.partition.max.record.locks}. Each record is settled when the session says so, one by one:
 * there is no batch that must be settled before more can be fetched. AUTO_ACKNOWLEDGE and DUPS_OK_ACKNOWLEDGE
 * acceptances leave at once (without the application waiting): with the next ShareFetch when one is being sent, else
 * in a ShareSettle on the control channel, which the broker applies immediately even while a fetch is parked. While
 * records are held (buffered or delivered), their locks are renewed every half lock duration, so a slow application
 * does not lose them to lock expiry.
 *
 * <h2>Fairness: read-ahead never starves another consumer</h2>
 * A consumer acquires only while its application wants messages: a MessageListener is set, a receive is waiting, or
 * the application took a message within the last {@code prefetchIdleReleaseMs}. When none holds, the records it read
 * ahead and did not hand out are returned to the broker (ShareSettle RETURN: available again at once, delivery count
 * unchanged, JMSRedelivered still false), so a consumer that stopped receiving holds back nothing from one that
 * waits. A consumer that keeps receiving keeps its window.
 *
 * <h2>Cluster and failover</h2>
 * Heartbeats go to the group's coordinator ({@link ShareMembership}: FindCoordinator, found again when it moves).
 * ShareFetch and ShareSettle go to each partition's leader ({@link ClusterLookup}: Metadata, with the topic id), on
 * two channels per leader broker (a long-polling fetch channel and a settle channel, all on this consumer's event
 * loop: sockets, not threads) with one share session per leader (KIP-932 sessions are per broker); the window is
 * shared among the leaders. A lost leader connection, NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH or
 * UNKNOWN_TOPIC_OR_PARTITION moves the partition: to the leader a KIP-951 hint in the answer names, else to the one
 * Metadata names (asked again after {@value ShareMembership#RECONNECT_BACKOFF_MS} ms until there is one). Records
 * acquired from the old leader lost their locks with it and are settled nowhere (the broker delivers them again,
 * JMSRedelivered=true with a raised JMSXDeliveryCount): those read ahead are dropped without being handed out, and
 * returned to the new leader before this consumer fetches there (ShareSettle RETURN), which undoes the lost
 * acquisition's count of each one it has not delivered since, so that a failover neither raises the JMSXDeliveryCount
 * of a message the application never received nor moves it toward the dead-letter queue; a
 * synchronous acceptance of handed-out ones (CLIENT_ACKNOWLEDGE, a transacted commit) fails with
 * INVALID_RECORD_STATE and releases the rest of what it would have accepted, so that none of it is accepted; an
 * asynchronous one (AUTO_ACKNOWLEDGE) is dropped. Meanwhile {@code take} waits, and a synchronous settlement that
 * could not be sent waits for the leader and is sent again, for up to {@code failoverTimeoutMs}
 * ({@link RetryWindow}). When the coordinator is lost, records read ahead are taken out of the buffer and given back
 * once connected again, never handed out across the loss; when the member must rejoin (the broker released what it
 * held), those read ahead are given back too. Records given back this way are returned to their partition's leader
 * before the next fetch from it.
 *
 * <p>Thread-safe. State marked "loop" is touched only on this consumer's event loop.
 */
public final class ShareFetcher implements Fetcher {

    /** Debug: routing, leader losses, fetch errors and moves, for diagnosing a consumer that stops receiving. */
    private static final Logger LOG = LoggerFactory.getLogger(ShareFetcher.class);

    /**
     * Error code of the JMSException of a synchronous settlement whose outcome is unknown: its first request's answer
     * was lost and the broker refused the request sent again (it may have applied the first).
     */
    public static final String SETTLE_OUTCOME_UNKNOWN = "SETTLE_OUTCOME_UNKNOWN";

    /** Retries of a lock renewal for partitions without a connected leader ({@link #renew}): 10 s at most. */
    private static final int RENEW_RETRIES = 20;

    /** How long a ShareFetch may wait at the broker for records. */
    static final int FETCH_MAX_WAIT_MS = 500;
    private static final short FETCH_VERSION = 1;

    private final ConnectionSettings settings;
    private final String topic;
    private final String clientId;
    private final String groupId;
    private final String rack;
    private final String memberId;
    private final io.netty.channel.EventLoop loop = ClientEventLoops.next();
    private final LinkedBlockingDeque<Delivery> buffer = new LinkedBlockingDeque<>();
    private final ConcurrentLinkedQueue<Delivery> acceptedLater = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean flushScheduled = new AtomicBoolean();
    private final AtomicBoolean fetchRequested = new AtomicBoolean();
    private final AtomicInteger waiters = new AtomicInteger();
    private final long idleReleaseNanos;
    private final ReadAheadWindow readAhead;
    private volatile Runnable onArrival = () -> { };
    private volatile Throwable failure;
    private volatile boolean closed;
    private volatile boolean listening;
    private volatile long lastTakeNanos = System.nanoTime();

    private final ShareMembership membership;
    private final RetryWindow retryWindow;

    // loop state
    /** The channel to the group's coordinator (Metadata look-ups go there too); null while it is found again. */
    private BrokerChannel coordinatorChannel;
    private Uuid topicId;
    private List<Integer> partitions = List.of();
    /** The leader of each partition this consumer fetches or holds records of. */
    private final Map<Integer, ShareLeader> leaderOf = new HashMap<>();
    /** The brokers this consumer has channels to, by node id. */
    private final Map<Integer, ShareLeader> leaders = new HashMap<>();
    private boolean routing;
    private boolean refreshScheduled;
    /** What this member holds of each partition, and what became of the records whose locks it lost. */
    private final ShareCustody custody = new ShareCustody();
    /** Read ahead, not handed out, when the connection was lost; returned once connected again. */
    private final List<Delivery> readAheadBeforeLoss = new ArrayList<>();
    private final SettleBatches pendingAsync;
    private boolean settleInFlight;
    /** The asynchronous settlement round in flight (complete when none is); close waits for it before leaving. */
    private CompletableFuture<?> asyncSettled = CompletableFuture.completedFuture(null);
    /** The group's record lock duration, from the broker's answers (read by application threads too). */
    private volatile int lockDurationMs = 30_000;
    private ScheduledFuture<?> renewal;
    private ScheduledFuture<?> idleCheck;

    /**
     * Joins the share group and starts fetching; returns once this consumer is a member with its assignment.
     *
     * @param rack the member's rack id: a selector for the broker to apply at acquisition
     *             ({@link dev.millrace.protocol.selector.MemberSelector}), or null
     */
    public ShareFetcher(ConnectionSettings settings, String clientId, String topic, String groupId, String rack)
            throws JMSException {
        this.settings = settings;
        this.clientId = clientId;
        this.topic = topic;
        this.groupId = groupId;
        this.rack = rack;
        this.pendingAsync = new SettleBatches(topic);
        this.idleReleaseNanos = TimeUnit.MILLISECONDS.toNanos(settings.prefetchIdleReleaseMs());
        this.readAhead = new ReadAheadWindow(settings.prefetch(), System.nanoTime());
        this.retryWindow = RetryWindow.of(settings.failoverTimeoutMs());
        this.membership = new ShareMembership(settings, loop, clientId, groupId, topic, rack, new Member());
        this.memberId = membership.memberId();
        try {
            await("join share group " + groupId, membership.join());
        } catch (JMSException | RuntimeException e) {
            onLoop(() -> {
                closed = true;
                membership.closeChannels();
                closeLeaders();
            });
            throw e;
        }
        onLoop(this::scheduleRenewal);
    }

    // ---- application side

    @Override
    public void onArrival(Runnable onArrival) {
        this.onArrival = onArrival;
    }

    /**
     * Whether a MessageListener consumes from this consumer: it then keeps its window filled whether or not the
     * listener is busy. Any thread.
     */
    public void setListening(boolean listening) {
        this.listening = listening;
        if (listening) {
            requestFetch();
        }
    }

    @Override
    public Delivery take(long timeoutMs) throws InterruptedException {
        waiters.incrementAndGet();
        lastTakeNanos = System.nanoTime();
        try {
            Delivery d = buffer.pollFirst();
            if (d == null && timeoutMs != 0) {
                requestFetch();
                if (timeoutMs < 0) {
                    while (d == null && !closed) {
                        d = buffer.pollFirst(100, TimeUnit.MILLISECONDS);
                    }
                } else {
                    d = buffer.pollFirst(timeoutMs, TimeUnit.MILLISECONDS);
                }
            }
            if (d != null) {
                readAhead.taken(!buffer.isEmpty());
            }
            if (window() - buffer.size() >= refillAt()) {
                requestFetch();
            }
            return d;
        } finally {
            waiters.decrementAndGet();
            lastTakeNanos = System.nanoTime();
        }
    }

    @Override
    public void putBack(List<Delivery> deliveries) {
        for (int i = deliveries.size() - 1; i >= 0; i--) {
            buffer.addFirst(deliveries.get(i));
        }
    }

    @Override
    public boolean hasBuffered() {
        return !buffer.isEmpty();
    }

    @Override
    public Throwable failure() {
        Throwable f = failure;
        return f != null ? f : membership.failure();
    }

    /** Accepts the records: they will not be delivered again. {@code sync} waits for the broker's answer. */
    public void acknowledge(List<Delivery> deliveries, boolean sync) throws JMSException {
        settle(deliveries, ShareSettle.ACCEPT, sync, "accept");
    }

    /** Releases the records: the broker delivers them again (to any consumer), their delivery count raised. */
    public void release(List<Delivery> deliveries) throws JMSException {
        settle(deliveries, ShareSettle.RELEASE, true, "release");
    }

    /**
     * Accepts the records without waiting (AUTO_ACKNOWLEDGE, {@code sendNow}, and DUPS_OK_ACKNOWLEDGE alike): they
     * leave at once, with a ShareFetch about to be sent or in a ShareSettle. A consumer that dies before the broker
     * has them gets the records again, with a raised delivery count.
     */
    public void acknowledgeLater(List<Delivery> deliveries, boolean sendNow) {
        acceptedLater.addAll(deliveries);
        if (flushScheduled.compareAndSet(false, true)) {
            loop.execute(this::flushAcceptedLater);
        }
    }

    /**
     * Makes the acceptance of {@code deliveries} part of the open transaction of {@code transactionalId}
     * (TxnShareAcknowledge, one request per partition); the transaction's commit accepts them, its abort releases
     * them. The partition's leader checks that this member (by member id) holds them.
     */
    public void acceptInTransaction(BrokerExtensions extensions, String transactionalId, List<Delivery> deliveries)
            throws JMSException {
        Map<Integer, List<Long>> byPartition = new TreeMap<>();
        for (Delivery d : deliveries) {
            byPartition.computeIfAbsent(d.partition(), p -> new ArrayList<>()).add(d.offset());
        }
        for (Map.Entry<Integer, List<Long>> e : byPartition.entrySet()) {
            extensions.holdForTransaction(transactionalId, groupId, memberId, topic, e.getKey(), e.getValue());
        }
        onLoop(() -> deliveries.forEach(d -> custody.unhold(d.partition(), d.offset())));
    }

    private void settle(List<Delivery> deliveries, byte type, boolean sync, String what) throws JMSException {
        if (deliveries.isEmpty()) {
            return;
        }
        SettleAttempt sent = new SettleAttempt(type);
        CompletableFuture<ShareSettle.Response> firstAttempt = attemptSettle(deliveries, sent, false);
        if (!sync) {
            return;
        }
        // a lost connection or a moved leader: wait for the reconnection and send the same settlement again, within
        // the failover window; the broker's answer then says whether the records were still held
        boolean[] retry = {false};
        boolean[] resent = {false}; // an earlier attempt may have reached the broker
        ShareSettle.Response r = retryWindow.call(what + " " + deliveries.size() + " message(s) of " + topic, () -> {
            CompletableFuture<ShareSettle.Response> attempt = retry[0]
                    ? attemptSettle(deliveries, sent, true) : firstAttempt;
            retry[0] = true;
            try {
                return attempt.get(settings.requestTimeoutMs(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                resent[0] |= !(e.getCause() instanceof NotSentException);
                throw e.getCause() instanceof Exception ex ? ex : e;
            } catch (java.util.concurrent.TimeoutException e) {
                resent[0] = true;
                throw e;
            }
        });
        for (ShareSettle.PartitionResult p : r.partitions()) {
            if (p.errorCode() != Errors.NONE.code() && resent[0]) {
                // the first attempt's answer was lost: it may have been applied before the broker refused the resend
                throw new JMSException(what + " of messages of " + topic + " (partition " + p.partition()
                        + "): the outcome is unknown: the answer to the first request was lost in a failover and the "
                        + "broker refused the request sent again (" + Errors.forCode(p.errorCode()).name() + ")",
                        SETTLE_OUTCOME_UNKNOWN);
            }
            if (p.errorCode() != Errors.NONE.code()) {
                Errors error = Errors.forCode(p.errorCode());
                throw new JMSException(what + " of messages of " + topic + " (partition " + p.partition()
                        + ") failed: " + error.name() + (error == Errors.INVALID_RECORD_STATE
                        || RetryWindow.isRetriableError(error) || error == Errors.UNKNOWN_TOPIC_OR_PARTITION
                        ? " (the lock of a message expired, this consumer left the group, or a failover released "
                        + "it: it may be delivered again, with JMSRedelivered=true)" : ""), error.name());
            }
        }
    }

    /** What one synchronous settlement sends, the same in each of its attempts. Loop. */
    private static final class SettleAttempt {
        byte type;
        /** A partition whose lost records refuse an acceptance, or -1. */
        int refusedPartition = -1;
        final List<Delivery> toSettle = new ArrayList<>();

        SettleAttempt(byte type) {
            this.type = type;
        }
    }

    /**
     * Sends one settlement of {@code deliveries}: the first attempt settles those still held (collecting them in
     * {@code attempt.toSettle}) together with whatever else is pending; a retry sends those again. When some of
     * {@code deliveries} were acquired from a leader that was lost (their locks went with it), an acceptance is
     * refused as a whole: the others are released instead and the answer carries INVALID_RECORD_STATE for the lost
     * ones' partition, so that nothing of it is accepted and all come again (flagged). Any thread.
     */
    private CompletableFuture<ShareSettle.Response> attemptSettle(List<Delivery> deliveries, SettleAttempt attempt,
                                                                 boolean retry) {
        CompletableFuture<ShareSettle.Response> response = new CompletableFuture<>();
        onLoop(() -> {
            SettleBatches batches = new SettleBatches(topic);
            if (retry) {
                attempt.toSettle.forEach(d -> batches.add(d.partition(), d.offset(), attempt.type));
            } else {
                for (Delivery d : deliveries) {
                    if (custody.forgetLost(d.partition(), d.offset()) && attempt.type == ShareSettle.ACCEPT) {
                        attempt.refusedPartition = d.partition();
                    }
                }
                if (attempt.refusedPartition >= 0) {
                    attempt.type = ShareSettle.RELEASE;
                }
                for (Delivery d : deliveries) {
                    if (custody.unhold(d.partition(), d.offset())) {
                        batches.add(d.partition(), d.offset(), attempt.type);
                        attempt.toSettle.add(d);
                    }
                }
                takePending(batches);
            }
            sendSettle(batches).whenComplete((r, e) -> {
                if (e != null) {
                    response.completeExceptionally(e);
                } else if (attempt.refusedPartition >= 0) {
                    List<ShareSettle.PartitionResult> results = new ArrayList<>(r.partitions());
                    results.add(new ShareSettle.PartitionResult(topic, attempt.refusedPartition,
                            Errors.INVALID_RECORD_STATE.code()));
                    response.complete(new ShareSettle.Response(r.errorCode(), r.errorMessage(), results));
                } else {
                    response.complete(r);
                }
            });
        });
        return response;
    }

    // ---- close

    /**
     * Leaves the group: records read ahead and not handed out are returned (not counted as a delivery), records
     * handed out and not settled are released (delivered again, JMSRedelivered). Waits up to the request timeout.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        CompletableFuture<Void> done = new CompletableFuture<>();
        onLoop(() -> {
            cancelTimers();
            // acknowledgements riding on a parked fetch: closing its channel may lose them, and the broker may
            // handle the leave (on the coordinator's channel) before that fetch; they go again, and are settled
            // before the leave (a second acceptance of a record is refused, which changes nothing)
            List<ShareSettle.PartitionBatches> resend = new ArrayList<>();
            for (ShareLeader l : leaders.values()) {
                if (l.fetchInFlight) {
                    resend.addAll(l.riding);
                }
                if (l.fetch != null) {
                    l.fetch.close(); // a parked fetch must not acquire for a member that is leaving
                    l.fetch = null;
                }
            }
            SettleBatches last = new SettleBatches(topic);
            returnUnread(last);
            takePending(last);
            custody.drainHeld((p, o) -> last.add(p, o, ShareSettle.RELEASE));
            List<ShareSettle.PartitionBatches> lastBatches = last.drain(routable(last.partitions()));
            // the leave may overtake settlements still on their way (other channels): the round in flight, the
            // acknowledgements sent again and the last ones are answered first
            CompletableFuture<?> settled = asyncSettled.handle((r, e) -> sendSettle(resend)).thenCompose(f -> f)
                    .handle((r, e) -> sendSettle(lastBatches)).thenCompose(f -> f);
            settled.handle((r, e) -> membership.leave()).thenCompose(f -> f).whenComplete((r, e) -> {
                membership.closeChannels();
                closeLeaders();
                done.complete(null);
            });
        });
        try {
            done.get(settings.requestTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // the broker releases what it did not get once the member's session times out
        } finally {
            onLoop(() -> {
                membership.closeChannels();
                closeLeaders();
            });
        }
    }

    private void cancelTimers() {
        for (ScheduledFuture<?> f : new ScheduledFuture<?>[] {renewal, idleCheck}) {
            if (f != null) {
                f.cancel(false);
            }
        }
    }

    // ---- membership (loop)

    /** What the membership tells this consumer. */
    private final class Member implements ShareMembership.Listener {

        @Override
        public void onConnected(BrokerChannel control) {
            LOG.debug("{} {}: coordinator {}", memberId, topic, control.address());
            coordinatorChannel = control;
            failure = null;
            // read ahead before the coordinator was lost and never handed out: returned before the next fetch from
            // their leaders, uncounted whether the leader still holds them for this member or released them meanwhile
            readAheadBeforeLoss.forEach(d -> custody.orphan(d.partition(), d.offset()));
            readAheadBeforeLoss.clear();
            refreshRoutes(); // the coordinator moved: leaders may have moved too
        }

        @Override
        public void onAssignment(Uuid id, List<Integer> assigned) {
            LOG.debug("{} {}: assigned {} (was {})", memberId, topic, assigned, partitions);
            if (id != null && topicId != null && !id.equals(topicId)) {
                // the topic was deleted and created again: nothing held belongs to the new one
                new ArrayList<>(leaderOf.keySet()).forEach(ShareFetcher.this::partitionMoved);
                custody.retainOrphaned(Set.of());
            }
            custody.retainOrphaned(new HashSet<>(assigned)); // returned only by way of a partition this member fetches
            if (!assigned.equals(partitions) || (id != null && !id.equals(topicId))) {
                partitions = assigned;
                topicId = id;
                for (ShareLeader l : leaders.values()) {
                    // a new session at each leader with its partitions still assigned
                    l.partitions.retainAll(assigned);
                    l.sessionEpoch = ShareRequestMetadata.INITIAL_EPOCH;
                }
                refreshRoutes();
            }
            failure = null;
            maybeFetch();
        }

        @Override
        public void onRejoining() {
            LOG.debug("{} {}: rejoining", memberId, topic);
            // the broker released everything this member held: what is buffered may go to others now (and is returned,
            // so that the release does not count as a delivery of it), and what the application holds can no longer
            // be accepted
            List<Delivery> stale = new ArrayList<>();
            buffer.drainTo(stale);
            stale.addAll(readAheadBeforeLoss);
            readAheadBeforeLoss.clear();
            stale.forEach(d -> custody.orphan(d.partition(), d.offset()));
            custody.loseAllHeld();
            pendingAsync.drain();
            leaders.values().forEach(l -> l.sessionEpoch = ShareRequestMetadata.INITIAL_EPOCH);
        }

        @Override
        public void onDisconnected(Throwable cause) {
            LOG.debug("{} {}: coordinator lost: {}", memberId, topic, String.valueOf(cause));
            // found again by the membership; receive() keeps waiting, the connection's liveness check tells the
            // ExceptionListener when the cluster stays unreachable
            coordinatorChannel = null;
            buffer.drainTo(readAheadBeforeLoss); // not handed out across a failover (see onConnected)
        }
    }

    // ---- routing (loop)

    /** Asks the coordinator's broker for the assigned partitions' leaders (Metadata) and routes them. */
    private void refreshRoutes() {
        if (routing || closed || coordinatorChannel == null || partitions.isEmpty()) {
            return;
        }
        routing = true;
        ClusterLookup.routes(coordinatorChannel, topic).whenComplete((r, e) -> onLoop(() -> {
            routing = false;
            if (closed) {
                return;
            }
            if (e != null) {
                LOG.debug("{} {}: Metadata failed: {}", memberId, topic, e.toString());
                scheduleRefresh();
                return;
            }
            boolean missing = false;
            for (int p : partitions) {
                ClusterLookup.Broker leader = r.leaders().get(p);
                if (leader == null) {
                    missing = true; // electing a leader now
                } else {
                    route(p, leader);
                }
            }
            if (missing) {
                scheduleRefresh();
            }
            maybeFetch();
        }));
    }

    private void scheduleRefresh() {
        if (refreshScheduled || closed) {
            return;
        }
        refreshScheduled = true;
        loop.schedule(() -> {
            refreshScheduled = false;
            refreshRoutes();
        }, ShareMembership.RECONNECT_BACKOFF_MS, TimeUnit.MILLISECONDS);
    }

    /** Fetches {@code partition} from {@code broker} from now on (a move drops what the old leader gave). */
    private void route(int partition, ClusterLookup.Broker broker) {
        ShareLeader current = leaderOf.get(partition);
        if (current != null && current.broker.equals(broker) && leaders.get(broker.nodeId()) == current
                && !current.disconnected()) {
            current.partitions.add(partition);
            return;
        }
        if (current != null) {
            partitionMoved(partition);
        }
        ShareLeader l = leaders.get(broker.nodeId());
        if (l != null && (!l.broker.equals(broker) || l.disconnected())) {
            // the node came back at another address, or its connections closed while this consumer fetched nothing
            // there (its partitions had moved away): connect again rather than keep a leader no fetch can reach
            leaderLost(l);
            l = null;
        }
        if (l == null) {
            l = new ShareLeader(broker);
            leaders.put(broker.nodeId(), l);
            connect(l);
        }
        l.partitions.add(partition);
        l.sessionEpoch = ShareRequestMetadata.INITIAL_EPOCH; // a new session that names the partition
        leaderOf.put(partition, l);
        LOG.debug("{} {}-{}: fetched from node {} ({})", memberId, topic, partition, broker.nodeId(), broker);
    }

    private void connect(ShareLeader l) {
        ClusterLookup.Broker b = l.broker;
        int timeoutMs = settings.requestTimeoutMs();
        CompletableFuture<BrokerChannel> fetch = ClusterLookup.connect(loop, b.host(), b.port(), clientId, timeoutMs,
                settings.security());
        CompletableFuture<BrokerChannel> settle = ClusterLookup.connect(loop, b.host(), b.port(), clientId, timeoutMs,
                settings.security());
        fetch.handle((f, fe) -> settle.handle((c, ce) -> {
            onLoop(() -> {
                if (closed || leaders.get(b.nodeId()) != l || fe != null || ce != null) {
                    if (f != null) {
                        f.close();
                    }
                    if (c != null) {
                        c.close();
                    }
                    if (!closed && leaders.get(b.nodeId()) == l) {
                        leaderLost(l);
                    }
                    return;
                }
                l.fetch = f;
                l.settle = c;
                l.sessionEpoch = ShareRequestMetadata.INITIAL_EPOCH;
                // a leader whose partitions moved elsewhere is kept, fetching nothing, for when they come back: it
                // must learn of a closed connection without a fetch in flight to fail (else it is reused, dead)
                f.closed().thenRun(() -> onLoop(() -> channelClosed(l, f)));
                c.closed().thenRun(() -> onLoop(() -> channelClosed(l, c)));
                maybeFetch();
                maybeSettleAsync();
            });
            return null;
        }));
    }

    private void channelClosed(ShareLeader l, BrokerChannel channel) {
        if (!closed && leaders.get(l.broker.nodeId()) == l && (l.fetch == channel || l.settle == channel)) {
            LOG.debug("{} {}: connection to node {} closed", memberId, topic, l.broker.nodeId());
            leaderLost(l);
        }
    }

    /** The leader is unreachable or leads none of its partitions any more: they move; new routes are asked for. */
    private void leaderLost(ShareLeader l) {
        if (closed || leaders.get(l.broker.nodeId()) != l) {
            return;
        }
        LOG.debug("{} {}: leader node {} lost, partitions {}", memberId, topic, l.broker.nodeId(), l.partitions);
        leaders.remove(l.broker.nodeId());
        l.close();
        for (Map.Entry<Integer, ShareLeader> e : new ArrayList<>(leaderOf.entrySet())) {
            if (e.getValue() == l) {
                partitionMoved(e.getKey());
            }
        }
        scheduleRefresh();
    }

    /**
     * {@code partition} no longer comes from its leader: the records acquired there lost their locks with it (the
     * broker delivers them again, counted as a delivery), so they are settled nowhere. Those read ahead are dropped
     * without being handed out, and returned to the next leader ({@link #orphaned}); those handed out are remembered
     * as lost, so that a synchronous acceptance of them fails (INVALID_RECORD_STATE) instead of claiming success.
     * Loop.
     */
    private void partitionMoved(int partition) {
        ShareLeader l = leaderOf.remove(partition);
        if (l != null) {
            l.partitions.remove(partition);
            l.sessionEpoch = ShareRequestMetadata.INITIAL_EPOCH;
        }
        buffer.removeIf(d -> d.partition() == partition && custody.orphan(partition, d.offset()));
        readAheadBeforeLoss.removeIf(d -> d.partition() == partition && custody.orphan(partition, d.offset()));
        custody.loseHeld(partition);
        pendingAsync.removePartition(partition);
    }

    /**
     * Returns the orphaned records of {@code l}'s partitions to it, if there are any: true when the RETURN was sent;
     * {@code l} is fetched from once it is answered. The offsets stay orphaned, for another attempt, only if the return
     * was not applied and may be on a retry (the connection failed, the partition moved again, its state is still
     * loading), up to {@value ShareCustody#MAX_RETURNS} attempts; any other answer (some delivered since, refused) ends it:
     * the return is a correction of the counts, not a settlement anyone waits for. Loop.
     */
    private boolean returnOrphaned(ShareLeader l) {
        SettleBatches back = new SettleBatches(topic);
        for (int p : l.partitions) {
            TreeSet<Long> offsets = leaderOf.get(p) == l ? custody.takeOrphaned(p) : null;
            if (offsets != null) {
                offsets.forEach(o -> back.add(p, o, ShareSettle.RETURN));
            }
        }
        if (back.isEmpty()) {
            return false;
        }
        List<ShareSettle.PartitionBatches> batches = back.drain();
        l.returning = true;
        sendSettle(l, batches).whenComplete((r, e) -> onLoop(() -> {
            l.returning = false;
            if (closed) {
                return;
            }
            boolean again = false;
            for (ShareSettle.PartitionBatches pb : batches) {
                Errors pe = e != null ? null : errorOf(r, pb.partition());
                // not applied, worth another try: the connection failed, the partition moved again, or its state is
                // still loading at the new leader
                boolean retry = e != null ? !(e.getCause() instanceof JMSException) : RetryWindow.isRetriableError(pe);
                List<Long> offsets = new ArrayList<>();
                pb.batches().forEach(b -> {
                    for (long o = b.firstOffset(); o <= b.lastOffset(); o++) {
                        offsets.add(o);
                    }
                });
                again |= custody.returnAnswered(pb.partition(), offsets, retry, partitions.contains(pb.partition()));
                LOG.debug("{} {}-{}: returned records read ahead from the lost leader: {}", memberId, topic,
                        pb.partition(), e != null ? e.toString() : pe);
            }
            if (again) {
                loop.schedule(this::maybeFetch, ShareMembership.RECONNECT_BACKOFF_MS, TimeUnit.MILLISECONDS);
            } else {
                maybeFetch();
            }
        }));
        return true;
    }

    private static Errors errorOf(ShareSettle.Response response, int partition) {
        for (ShareSettle.PartitionResult p : response.partitions()) {
            if (p.partition() == partition) {
                return Errors.forCode(p.errorCode());
            }
        }
        return Errors.NONE;
    }

    /** Of {@code wanted}, the partitions whose leader is connected. */
    private Set<Integer> routable(Set<Integer> wanted) {
        Set<Integer> out = new TreeSet<>();
        for (int p : wanted) {
            ShareLeader l = leaderOf.get(p);
            if (l != null && l.connected()) {
                out.add(p);
            }
        }
        return out;
    }

    private void closeLeaders() {
        // a copy: closing a channel fails the requests in flight on it, whose handlers (run here, on the loop) may
        // drop their leader from the map
        new ArrayList<>(leaders.values()).forEach(ShareLeader::close);
        leaders.clear();
        leaderOf.clear();
    }

    // ---- fetching (loop)

    private void requestFetch() {
        if (!closed && fetchRequested.compareAndSet(false, true)) {
            loop.execute(() -> {
                fetchRequested.set(false);
                maybeFetch();
            });
        }
    }

    /**
     * Free room in the window at which a consumer that still has records buffered fetches more: half the window, the
     * one rule for every path that may fetch (a take, a fetch's answer, a settlement).
     */
    private int refillAt() {
        return Math.max(1, window() / 2);
    }

    private boolean hasDemand() {
        return listening || waiters.get() > 0 || System.nanoTime() - lastTakeNanos < idleReleaseNanos;
    }

    /** Sends a ShareFetch to each leader that has assigned partitions and none in flight. */
    private void maybeFetch() {
        if (closed || topicId == null || partitions.isEmpty() || !membership.isJoined()) {
            return;
        }
        if (custody.hasOrphaned()) {
            // at once, wanted or not: until returned they may be held for this member, out of others' reach
            for (ShareLeader l : new ArrayList<>(leaders.values())) {
                if (l.connected() && !l.returning) {
                    returnOrphaned(l);
                }
            }
        }
        int buffered = buffer.size();
        int room = window() - buffered;
        // refill once half the window is free, not whenever an answer leaves room for a few records: a fetch of one
        // record costs a round trip and a state save on the broker like a fetch of hundreds (an empty buffer always
        // fetches: a receive may wait)
        if (room <= 0 || !hasDemand() || buffered > 0 && room < refillAt()) {
            maybeSettleAsync();
            return;
        }
        List<ShareLeader> fetching = new ArrayList<>();
        for (ShareLeader l : leaders.values()) {
            if (!l.partitions.isEmpty()) {
                fetching.add(l);
            }
        }
        // the window is shared by the leaders, so that all of them together acquire no more than it
        int share = Math.max(1, room / Math.max(1, fetching.size()));
        boolean sent = false;
        for (ShareLeader l : fetching) {
            if (l.connected() && l.fetch != null && !l.fetchInFlight && !l.returning) {
                fetchFrom(l, share); // a leader being returned records is fetched from once they are back
                sent = true;
            }
        }
        if (!sent) {
            maybeSettleAsync();
        }
    }

    private void fetchFrom(ShareLeader l, int room) {
        ShareFetchRequestData data = new ShareFetchRequestData().setGroupId(groupId).setMemberId(memberId)
                .setShareSessionEpoch(l.sessionEpoch).setMaxWaitMs(FETCH_MAX_WAIT_MS).setMinBytes(1)
                .setMaxBytes(settings.prefetchBytes()).setMaxRecords(room).setBatchSize(room);
        ShareFetchRequestData.FetchTopic fetchTopic = new ShareFetchRequestData.FetchTopic().setTopicId(topicId);
        List<ShareSettle.PartitionBatches> riding = List.of();
        if (l.sessionEpoch == ShareRequestMetadata.INITIAL_EPOCH) {
            for (int p : l.partitions) {
                fetchTopic.partitions().add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(p));
            }
            maybeSettleAsync(); // a session's first fetch carries no acknowledgements
        } else if (!pendingAsync.isEmpty()) {
            Set<Integer> mine = new TreeSet<>();
            leaderOf.forEach((p, leader) -> {
                if (leader == l && l.partitions.contains(p)) {
                    mine.add(p); // in the session: acknowledgements ride only on the partitions it fetches
                }
            });
            riding = pendingAsync.drain(mine);
            for (ShareSettle.PartitionBatches pb : riding) {
                ShareFetchRequestData.FetchPartition fp = new ShareFetchRequestData.FetchPartition()
                        .setPartitionIndex(pb.partition());
                for (ShareSettle.Batch b : pb.batches()) {
                    fp.acknowledgementBatches().add(new ShareFetchRequestData.AcknowledgementBatch()
                            .setFirstOffset(b.firstOffset()).setLastOffset(b.lastOffset())
                            .setAcknowledgeTypes(List.of(b.type())));
                }
                fetchTopic.partitions().add(fp);
            }
        }
        if (!fetchTopic.partitions().isEmpty()) {
            data.topics().add(fetchTopic);
        }
        if (LOG.isTraceEnabled()) { // every fetch: no argument array or boxing unless traced
            LOG.trace("{} {}: ShareFetch to node {}, epoch {}, partitions {}, room {}", memberId, topic,
                    l.broker.nodeId(), l.sessionEpoch, l.partitions, room);
        }
        l.sessionEpoch = ShareRequestMetadata.nextEpoch(l.sessionEpoch);
        l.fetchInFlight = true;
        l.riding = riding;
        BrokerChannel channel = l.fetch;
        channel.<ShareFetchResponse>send(new ShareFetchRequest.Builder(data), FETCH_VERSION)
                .whenComplete((response, e) -> {
                    if (channel != l.fetch || closed) {
                        return; // from before a move, or closing
                    }
                    l.fetchInFlight = false;
                    l.riding = List.of();
                    if (e != null) {
                        LOG.debug("{} {}: ShareFetch at node {} failed: {}", memberId, topic, l.broker.nodeId(),
                                e.toString());
                        leaderLost(l);
                        return;
                    }
                    onFetched(l, response.data());
                });
    }

    private void onFetched(ShareLeader l, ShareFetchResponseData data) {
        if (data.acquisitionLockTimeoutMs() > 0) {
            lockDurationMs = data.acquisitionLockTimeoutMs();
        }
        Errors error = Errors.forCode(data.errorCode());
        if (error == Errors.UNKNOWN_MEMBER_ID || error == Errors.FENCED_MEMBER_EPOCH) {
            membership.rejoin();
            return;
        }
        if (error == Errors.SHARE_SESSION_NOT_FOUND || error == Errors.INVALID_SHARE_SESSION_EPOCH) {
            l.sessionEpoch = ShareRequestMetadata.INITIAL_EPOCH;
            maybeFetch();
            return;
        }
        if (error != Errors.NONE) {
            LOG.debug("{} {}: ShareFetch at node {} answered {}", memberId, topic, l.broker.nodeId(), error);
        }
        if (RetryWindow.isRetriableError(error)) {
            leaderLost(l); // the broker stopped leading (failover): find the leaders again, then go on
            return;
        }
        if (error != Errors.NONE) {
            failure = new JMSException("fetching from " + topic + " for share group " + groupId + " failed: "
                    + error.name() + (data.errorMessage() == null ? "" : " " + data.errorMessage()), error.name());
            loop.schedule(this::maybeFetch, ShareMembership.RECONNECT_BACKOFF_MS, TimeUnit.MILLISECONDS);
            return;
        }
        failure = null; // the broker answers again
        List<Delivery> fetched = new ArrayList<>();
        for (ShareFetchResponseData.ShareFetchableTopicResponse t : data.responses()) {
            for (ShareFetchResponseData.PartitionData pd : t.partitions()) {
                if (pd.errorCode() != Errors.NONE.code()) {
                    Errors pe = Errors.forCode(pd.errorCode());
                    LOG.debug("{} {}-{}: ShareFetch at node {} answered {}", memberId, topic, pd.partitionIndex(),
                            l.broker.nodeId(), pe);
                    if (RetryWindow.isRetriableError(pe) || pe == Errors.UNKNOWN_TOPIC_OR_PARTITION
                            || pe == Errors.FENCED_LEADER_EPOCH) {
                        moveTo(pd.partitionIndex(), hint(data, pd));
                    }
                    continue; // else a deleted topic (temporary queue): nothing acquired there
                }
                if (leaderOf.get(pd.partitionIndex()) != l) {
                    continue; // moved while the fetch was parked; the broker releases them with the session
                }
                AcquiredRecords.Decoded decoded = AcquiredRecords.decode(topic, pd);
                for (AcquiredRecords.Acquired a : decoded.records()) {
                    custody.hold(pd.partitionIndex(), a.record().offset());
                    fetched.add(new Delivery(a.record(), a.deliveryCount()));
                }
                decoded.gaps().forEach(o -> pendingAsync.add(pd.partitionIndex(), o, ShareSettle.GAP));
            }
        }
        if (!fetched.isEmpty()) {
            // Priority, best effort (JMS 3.1 6.2.9): within one fetch, higher JMSPriority first; the sort is stable
            fetched.sort(Comparator.comparingInt(Delivery::priority).reversed());
            buffer.addAll(fetched);
            onArrival.run();
            scheduleIdleCheck();
        }
        maybeFetch();
    }

    /** The new leader a ShareFetch answer names for a partition (KIP-951), or null. */
    private static ClusterLookup.Broker hint(ShareFetchResponseData data, ShareFetchResponseData.PartitionData pd) {
        if (pd.currentLeader() == null || pd.currentLeader().leaderId() < 0) {
            return null;
        }
        ShareFetchResponseData.NodeEndpoint node = data.nodeEndpoints().find(pd.currentLeader().leaderId());
        return node == null ? null : new ClusterLookup.Broker(node.nodeId(), node.host(), node.port());
    }

    /** Moves {@code partition} to {@code leader} when known, else drops its route and asks for it again. */
    private void moveTo(int partition, ClusterLookup.Broker leader) {
        if (leader != null && partitions.contains(partition)) {
            route(partition, leader);
        } else {
            partitionMoved(partition);
            scheduleRefresh();
        }
    }

    // ---- settling (loop)

    private void flushAcceptedLater() {
        flushScheduled.set(false);
        drainAcceptedLater(pendingAsync);
        boolean fetchable = false;
        for (ShareLeader l : leaders.values()) {
            fetchable |= l.connected() && l.fetch != null && !l.fetchInFlight && !l.partitions.isEmpty()
                    && l.sessionEpoch != ShareRequestMetadata.INITIAL_EPOCH;
        }
        if (fetchable && hasDemand() && buffer.size() < window()) {
            maybeFetch(); // the acceptances ride on it
        }
        maybeSettleAsync();
    }

    /** Moves the application's queued acceptances into {@code into}. Loop. */
    private void drainAcceptedLater(SettleBatches into) {
        Delivery d;
        while ((d = acceptedLater.poll()) != null) {
            if (custody.unhold(d.partition(), d.offset())) {
                into.add(d.partition(), d.offset(), ShareSettle.ACCEPT);
            } else {
                custody.forgetLost(d.partition(), d.offset()); // its leader was lost: the broker delivers it again
            }
        }
    }

    /** Everything waiting to be settled asynchronously (queued acceptances, pending gaps) joins {@code into}. Loop. */
    private void takePending(SettleBatches into) {
        drainAcceptedLater(into);
        pendingAsync.moveTo(into);
    }

    /**
     * Sends the pending asynchronous settlements of partitions whose leader is connected now, one round at a time
     * (more collect meanwhile); the others wait for their leader.
     */
    private void maybeSettleAsync() {
        if (settleInFlight || pendingAsync.isEmpty()) {
            return;
        }
        drainAcceptedLater(pendingAsync);
        Set<Integer> ready = routable(pendingAsync.partitions());
        if (ready.isEmpty()) {
            return;
        }
        settleInFlight = true;
        asyncSettled = sendSettle(pendingAsync.drain(ready)).whenComplete((r, e) -> {
            settleInFlight = false;
            maybeSettleAsync();
        });
    }

    /**
     * Sends {@code batches} to their partitions' leaders; fails with {@link NotSentException} (taking nothing out of
     * {@code batches}) when a partition has no connected leader now.
     */
    private CompletableFuture<ShareSettle.Response> sendSettle(SettleBatches batches) {
        Set<Integer> wanted = batches.partitions();
        if (routable(wanted).size() < wanted.size()) {
            return CompletableFuture.failedFuture(new NotSentException());
        }
        return sendSettle(batches.drain());
    }

    /**
     * Sends settlements to their partitions' leaders, one ShareSettle per leader, and joins the answers; a partition
     * without a connected leader is answered NOT_LEADER_OR_FOLLOWER here. A partition that a leader says it does not
     * lead (or a lost connection) moves it. Loop.
     */
    private CompletableFuture<ShareSettle.Response> sendSettle(List<ShareSettle.PartitionBatches> batches) {
        if (batches.isEmpty()) {
            return CompletableFuture.completedFuture(new ShareSettle.Response(Errors.NONE.code(), null, List.of()));
        }
        Map<ShareLeader, List<ShareSettle.PartitionBatches>> byLeader = new HashMap<>();
        List<ShareSettle.PartitionResult> unrouted = new ArrayList<>();
        for (ShareSettle.PartitionBatches pb : batches) {
            ShareLeader l = leaderOf.get(pb.partition());
            if (l == null || !l.connected()) {
                unrouted.add(new ShareSettle.PartitionResult(topic, pb.partition(),
                        Errors.NOT_LEADER_OR_FOLLOWER.code()));
            } else {
                byLeader.computeIfAbsent(l, k -> new ArrayList<>()).add(pb);
            }
        }
        List<CompletableFuture<ShareSettle.Response>> answers = new ArrayList<>();
        byLeader.forEach((l, list) -> answers.add(sendSettle(l, list)));
        return CompletableFuture.allOf(answers.toArray(new CompletableFuture<?>[0])).thenApply(v -> {
            List<ShareSettle.PartitionResult> results = new ArrayList<>(unrouted);
            answers.forEach(a -> results.addAll(a.join().partitions()));
            return new ShareSettle.Response(Errors.NONE.code(), null, results);
        });
    }

    private CompletableFuture<ShareSettle.Response> sendSettle(ShareLeader l, List<ShareSettle.PartitionBatches> batches) {
        BrokerChannel channel = l.settle;
        ShareSettle.Request request = new ShareSettle.Request(groupId, memberId, batches);
        return channel.sendExtension(ExtensionApi.SHARE_SETTLE, ShareSettle.VERSION, request.toStruct())
                .thenApply(ShareSettle.Response::read)
                .whenComplete((r, e) -> onLoop(() -> {
                    if (e != null && l.settle == channel) {
                        leaderLost(l);
                    } else if (r != null) {
                        for (ShareSettle.PartitionResult p : r.partitions()) {
                            Errors pe = Errors.forCode(p.errorCode());
                            if ((pe == Errors.NOT_LEADER_OR_FOLLOWER || pe == Errors.UNKNOWN_TOPIC_OR_PARTITION)
                                    && leaderOf.get(p.partition()) == l) {
                                moveTo(p.partition(), null);
                            }
                        }
                    }
                }))
                .thenApply(r -> {
                    if (r.errorCode() != Errors.NONE.code()) {
                        Errors error = Errors.forCode(r.errorCode());
                        throw new java.util.concurrent.CompletionException(new JMSException("ShareSettle refused: "
                                + error + " " + r.errorMessage(), error.name()));
                    }
                    return r;
                });
    }

    /** Empties the buffer into {@code into} as RETURNs: read ahead, never handed out. Loop. */
    private void returnUnread(SettleBatches into) {
        List<Delivery> unread = new ArrayList<>();
        buffer.drainTo(unread);
        for (Delivery d : unread) {
            if (custody.unhold(d.partition(), d.offset())) {
                into.add(d.partition(), d.offset(), ShareSettle.RETURN);
            }
        }
    }

    /**
     * As {@link #returnUnread}, for the records whose leader is connected now; the others stay buffered, in order, for
     * a later check or a receive. (They used to be taken out of the buffer and their RETURN dropped for want of a
     * route, which left them acquired at the broker, handed to nobody, until their lock expired.) Loop.
     */
    private void returnUnreadRoutable(SettleBatches into) {
        List<Delivery> unread = new ArrayList<>();
        buffer.drainTo(unread);
        Set<Integer> wanted = new TreeSet<>();
        unread.forEach(d -> wanted.add(d.partition()));
        Set<Integer> ready = routable(wanted);
        List<Delivery> kept = new ArrayList<>();
        for (Delivery d : unread) {
            if (!ready.contains(d.partition())) {
                kept.add(d);
            } else if (custody.unhold(d.partition(), d.offset())) {
                into.add(d.partition(), d.offset(), ShareSettle.RETURN);
            }
        }
        if (!kept.isEmpty()) {
            putBack(kept);
            scheduleIdleCheck();
        }
    }

    /** How many records to read ahead now: {@code prefetch}, less for a slow application ({@link ReadAheadWindow}). */
    private int window() {
        return readAhead.window(System.nanoTime(), lockDurationMs);
    }

    /** Renews the locks of every held record each half lock duration, at each record's leader. */
    private void scheduleRenewal() {
        renewal = loop.schedule(() -> {
            if (closed) {
                return;
            }
            renew(custody.heldPartitions(), RENEW_RETRIES);
            scheduleRenewal();
        }, Math.max(500, lockDurationMs / 2), TimeUnit.MILLISECONDS);
    }

    /**
     * Renews the held records of {@code partitions} whose leader is connected; those of the others are tried again
     * every {@value ShareMembership#RECONNECT_BACKOFF_MS} ms, up to {@code retries} times, rather than only at the next
     * round half a lock duration later, by when their locks may have expired (a failover in between). Loop.
     */
    private void renew(Set<Integer> partitions, int retries) {
        if (closed) {
            return;
        }
        SettleBatches renew = new SettleBatches(topic);
        for (int p : partitions) {
            custody.heldOf(p).forEach(o -> renew.add(p, o, ShareSettle.RENEW));
        }
        Set<Integer> ready = routable(renew.partitions());
        sendSettle(renew.drain(ready));
        Set<Integer> waiting = renew.partitions();
        if (!waiting.isEmpty() && retries > 0) {
            loop.schedule(() -> renew(waiting, retries - 1), ShareMembership.RECONNECT_BACKOFF_MS,
                    TimeUnit.MILLISECONDS);
        }
    }

    /** Returns the read-ahead records once the application no longer wants messages (see the class javadoc). */
    private void scheduleIdleCheck() {
        if (listening || (idleCheck != null && !idleCheck.isDone())) {
            return;
        }
        long delayNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(10),
                lastTakeNanos + idleReleaseNanos - System.nanoTime());
        idleCheck = loop.schedule(() -> {
            idleCheck = null;
            if (closed || buffer.isEmpty()) {
                return;
            }
            if (hasDemand()) {
                scheduleIdleCheck();
                return;
            }
            SettleBatches back = new SettleBatches(topic);
            returnUnreadRoutable(back);
            sendSettle(back.drain(routable(back.partitions())));
        }, delayNanos, TimeUnit.NANOSECONDS);
    }

    // ---- helpers

    /** A settlement not sent because the control channel is down: the broker has certainly not seen it. */
    private static final class NotSentException extends IOException {
        private static final long serialVersionUID = 1L;

        NotSentException() {
            super("not connected to the broker");
        }
    }

    private void onLoop(Runnable r) {
        if (loop.inEventLoop()) {
            r.run();
        } else {
            loop.execute(r);
        }
    }

    private <T> T await(String what, CompletableFuture<T> future) throws JMSException {
        try {
            return future.get(settings.requestTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw JmsExceptions.fromClient(what, e);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof JMSException j) {
                throw j;
            }
            throw JmsExceptions.fromClient(what, e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw JmsExceptions.fromClient(what + ": no answer within " + settings.requestTimeoutMs() + " ms", e);
        }
    }

    @Override
    public String toString() {
        return "ShareFetcher[" + groupId + " on " + topic + ", member " + memberId + "]";
    }
}
