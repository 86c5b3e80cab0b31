package dev.millrace.jms.wire;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
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

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.JmsExceptions;
import dev.millrace.protocol.net.BrokerChannel;
import dev.millrace.jms.wire.net.ClientEventLoops;
import dev.millrace.jms.wire.failover.RetryWindow;
import dev.millrace.jms.wire.share.AcquiredRecords;
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
 * fetch) that the application has not taken yet. Records handed to the application do not count against the window:
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
 * Every request goes to the first broker of the bootstrap list that answers (routing each request to its partition's
 * leader and the group's coordinator is not built yet). A lost connection, NOT_LEADER_OR_FOLLOWER or a coordinator
 * error (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS) reconnects through the bootstrap
 * list and joins again ({@link ShareMembership}); meanwhile {@code take} waits, and a synchronous settlement waits
 * for the reconnection and is sent again, for up to {@code failoverTimeoutMs} ({@link RetryWindow}). Records read
 * ahead are taken out of the buffer when the connection is lost and given back once connected again, never handed
 * out across the loss; records the application holds are
 * settled as usual, and those the failover released come again with the broker's raised delivery count
 * (JMSRedelivered=true).
 *
 * <p>Thread-safe. State marked "loop" is touched only on this consumer's event loop.
 */
public final class ShareFetcher implements Fetcher {

    /**
     * Error code of the JMSException of a synchronous settlement whose outcome is unknown: its first request's answer
     * was lost and the broker refused the request sent again (it may have applied the first).
     */
    public static final String SETTLE_OUTCOME_UNKNOWN = "SETTLE_OUTCOME_UNKNOWN";

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
    private volatile Runnable onArrival = () -> { };
    private volatile Throwable failure;
    private volatile boolean closed;
    private volatile boolean listening;
    private volatile long lastTakeNanos = System.nanoTime();
    private volatile boolean fetchInFlight;

    private final ShareMembership membership;
    private final RetryWindow retryWindow;

    // loop state
    private BrokerChannel fetchChannel;
    private BrokerChannel controlChannel;
    private Uuid topicId;
    private List<Integer> partitions = List.of();
    private int sessionEpoch = ShareRequestMetadata.INITIAL_EPOCH;
    /** Offsets acquired and not settled, by partition (buffered or delivered to the application). */
    private final Map<Integer, TreeSet<Long>> held = new TreeMap<>();
    /** Read ahead, not handed out, when the connection was lost; returned once connected again. */
    private final List<Delivery> readAheadBeforeLoss = new ArrayList<>();
    private final SettleBatches pendingAsync;
    private boolean settleInFlight;
    private int lockDurationMs = 30_000;
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
        this.retryWindow = RetryWindow.of(settings.failoverTimeoutMs());
        this.membership = new ShareMembership(settings, loop, clientId, groupId, topic, rack, true, new Member());
        this.memberId = membership.memberId();
        try {
            await("join share group " + groupId, membership.join());
        } catch (JMSException | RuntimeException e) {
            onLoop(membership::closeChannels);
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
            if (buffer.size() <= settings.prefetch() / 2) {
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
     * them. The broker finds this member by its client id.
     */
    public void acceptInTransaction(BrokerExtensions extensions, String transactionalId, List<Delivery> deliveries)
            throws JMSException {
        Map<Integer, List<Long>> byPartition = new TreeMap<>();
        for (Delivery d : deliveries) {
            byPartition.computeIfAbsent(d.partition(), p -> new ArrayList<>()).add(d.offset());
        }
        for (Map.Entry<Integer, List<Long>> e : byPartition.entrySet()) {
            extensions.holdForTransaction(transactionalId, groupId, clientId, topic, e.getKey(), e.getValue());
        }
        onLoop(() -> deliveries.forEach(d -> unhold(d.partition(), d.offset())));
    }

    private void settle(List<Delivery> deliveries, byte type, boolean sync, String what) throws JMSException {
        if (deliveries.isEmpty()) {
            return;
        }
        List<Delivery> toSettle = new ArrayList<>();
        CompletableFuture<ShareSettle.Response> firstAttempt = attemptSettle(deliveries, type, toSettle, false);
        if (!sync) {
            return;
        }
        // a lost connection or a moved leader: wait for the reconnection and send the same settlement again, within
        // the failover window; the broker's answer then says whether the records were still held
        boolean[] retry = {false};
        boolean[] resent = {false}; // an earlier attempt may have reached the broker
        ShareSettle.Response r = retryWindow.call(what + " " + deliveries.size() + " message(s) of " + topic, () -> {
            CompletableFuture<ShareSettle.Response> attempt = retry[0]
                    ? attemptSettle(deliveries, type, toSettle, true) : firstAttempt;
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
                        ? " (the lock of a message expired, this consumer left the group, or a failover released "
                        + "it: it may be delivered again, with JMSRedelivered=true)" : ""), error.name());
            }
        }
    }

    /**
     * Sends one settlement of {@code deliveries}: the first attempt settles those still held (collecting them in
     * {@code toSettle}) together with whatever else is pending; a retry sends {@code toSettle} again. Any thread.
     */
    private CompletableFuture<ShareSettle.Response> attemptSettle(List<Delivery> deliveries, byte type,
                                                                 List<Delivery> toSettle, boolean retry) {
        CompletableFuture<ShareSettle.Response> response = new CompletableFuture<>();
        onLoop(() -> {
            SettleBatches batches = new SettleBatches(topic);
            if (retry) {
                toSettle.forEach(d -> batches.add(d.partition(), d.offset(), type));
            } else {
                for (Delivery d : deliveries) {
                    if (unhold(d.partition(), d.offset())) {
                        batches.add(d.partition(), d.offset(), type);
                        toSettle.add(d);
                    }
                }
                takePending(batches);
            }
            sendSettle(batches).whenComplete((r, e) -> {
                if (e != null) {
                    response.completeExceptionally(e);
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
            BrokerChannel fetch = fetchChannel;
            fetchChannel = null;
            if (fetch != null) {
                fetch.close(); // a parked fetch must not acquire for a member that is leaving
            }
            SettleBatches last = new SettleBatches(topic);
            returnUnread(last);
            takePending(last);
            held.forEach((p, offsets) -> offsets.forEach(o -> last.add(p, o, ShareSettle.RELEASE)));
            held.clear();
            CompletableFuture<?> settled = last.isEmpty() || controlChannel == null
                    ? CompletableFuture.completedFuture(null) : sendSettle(last);
            settled.handle((r, e) -> membership.leave()).thenCompose(f -> f).whenComplete((r, e) -> {
                membership.closeChannels();
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
            onLoop(membership::closeChannels);
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
        public void onConnected(BrokerChannel control, BrokerChannel fetch) {
            controlChannel = control;
            fetchChannel = fetch;
            fetchInFlight = false;
            settleInFlight = false;
            sessionEpoch = ShareRequestMetadata.INITIAL_EPOCH;
            failure = null;
            if (!readAheadBeforeLoss.isEmpty()) {
                // read ahead before the connection was lost and never handed out: if the broker still holds them for
                // this member they go back uncounted; if the failover released them (they come again, counted) the
                // broker refuses this, which changes nothing
                SettleBatches back = new SettleBatches(topic);
                for (Delivery d : readAheadBeforeLoss) {
                    if (unhold(d.partition(), d.offset())) {
                        back.add(d.partition(), d.offset(), ShareSettle.RETURN);
                    }
                }
                readAheadBeforeLoss.clear();
                sendSettle(back);
            }
        }

        @Override
        public void onAssignment(Uuid id, List<Integer> assigned) {
            if (!assigned.equals(partitions) || (id != null && !id.equals(topicId))) {
                partitions = assigned;
                topicId = id;
                sessionEpoch = ShareRequestMetadata.INITIAL_EPOCH; // a new session with the new partitions
            }
            failure = null;
            maybeFetch();
        }

        @Override
        public void onRejoining() {
            // the broker released everything this member held: what is buffered may go to others now
            List<Delivery> stale = new ArrayList<>();
            buffer.drainTo(stale);
            readAheadBeforeLoss.clear();
            held.clear();
            pendingAsync.drain();
            sessionEpoch = ShareRequestMetadata.INITIAL_EPOCH;
        }

        @Override
        public void onDisconnected(Throwable cause) {
            // retried by the membership; receive() keeps waiting, the connection's liveness check tells the
            // ExceptionListener when the cluster stays unreachable
            controlChannel = null;
            fetchChannel = null;
            fetchInFlight = false;
            buffer.drainTo(readAheadBeforeLoss); // not handed out from before a failover (see onConnected)
        }
    }

    // ---- fetching (loop)

    private void requestFetch() {
        if (!fetchInFlight && !closed && fetchRequested.compareAndSet(false, true)) {
            loop.execute(() -> {
                fetchRequested.set(false);
                maybeFetch();
            });
        }
    }

    private boolean hasDemand() {
        return listening || waiters.get() > 0 || System.nanoTime() - lastTakeNanos < idleReleaseNanos;
    }

    private void maybeFetch() {
        if (closed || fetchInFlight || fetchChannel == null || topicId == null || partitions.isEmpty()
                || !membership.isJoined()) {
            return;
        }
        int room = settings.prefetch() - buffer.size();
        if (room <= 0 || !hasDemand()) {
            maybeSettleAsync();
            return;
        }
        ShareFetchRequestData data = new ShareFetchRequestData().setGroupId(groupId).setMemberId(memberId)
                .setShareSessionEpoch(sessionEpoch).setMaxWaitMs(FETCH_MAX_WAIT_MS).setMinBytes(1)
                .setMaxBytes(settings.prefetchBytes()).setMaxRecords(room).setBatchSize(room);
        ShareFetchRequestData.FetchTopic fetchTopic = new ShareFetchRequestData.FetchTopic().setTopicId(topicId);
        if (sessionEpoch == ShareRequestMetadata.INITIAL_EPOCH) {
            for (int p : partitions) {
                fetchTopic.partitions().add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(p));
            }
            maybeSettleAsync(); // a session's first fetch carries no acknowledgements
        } else if (!pendingAsync.isEmpty()) {
            for (ShareSettle.PartitionBatches pb : pendingAsync.drain()) {
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
        sessionEpoch = ShareRequestMetadata.nextEpoch(sessionEpoch);
        fetchInFlight = true;
        BrokerChannel channel = fetchChannel;
        channel.<ShareFetchResponse>send(new ShareFetchRequest.Builder(data), FETCH_VERSION)
                .whenComplete((response, e) -> {
                    if (channel != fetchChannel || closed) {
                        return; // from before a reconnect, or closing
                    }
                    fetchInFlight = false;
                    if (e != null) {
                        membership.connectionLost(e);
                        return;
                    }
                    onFetched(response.data());
                });
    }

    private void onFetched(ShareFetchResponseData data) {
        if (data.acquisitionLockTimeoutMs() > 0) {
            lockDurationMs = data.acquisitionLockTimeoutMs();
        }
        Errors error = Errors.forCode(data.errorCode());
        if (error == Errors.UNKNOWN_MEMBER_ID || error == Errors.FENCED_MEMBER_EPOCH) {
            membership.rejoin();
            return;
        }
        if (error == Errors.SHARE_SESSION_NOT_FOUND || error == Errors.INVALID_SHARE_SESSION_EPOCH) {
            sessionEpoch = ShareRequestMetadata.INITIAL_EPOCH;
            maybeFetch();
            return;
        }
        if (RetryWindow.isRetriableError(error)) {
            // the partitions' leader or the group's coordinator moved (failover): connect again, then go on
            membership.connectionLost(new IOException("fetching from " + topic + ": " + error.name()));
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
        boolean moved = false;
        for (ShareFetchResponseData.ShareFetchableTopicResponse t : data.responses()) {
            for (ShareFetchResponseData.PartitionData pd : t.partitions()) {
                if (pd.errorCode() != Errors.NONE.code()) {
                    // a deleted topic (temporary queue) or a partition moving: nothing acquired there
                    moved |= RetryWindow.isRetriableError(Errors.forCode(pd.errorCode()));
                    continue;
                }
                AcquiredRecords.Decoded decoded = AcquiredRecords.decode(topic, pd);
                for (AcquiredRecords.Acquired a : decoded.records()) {
                    hold(pd.partitionIndex(), a.record().offset());
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
        if (moved) {
            membership.connectionLost(new IOException("fetching from " + topic + ": a partition's leader moved"));
            return;
        }
        maybeFetch();
    }

    // ---- settling (loop)

    private void flushAcceptedLater() {
        flushScheduled.set(false);
        drainAcceptedLater(pendingAsync);
        if (!fetchInFlight && sessionEpoch != ShareRequestMetadata.INITIAL_EPOCH && hasDemand()
                && buffer.size() < settings.prefetch()) {
            maybeFetch(); // the acceptances ride on it
        } else {
            maybeSettleAsync();
        }
    }

    /** Moves the application's queued acceptances into {@code into}. Loop. */
    private void drainAcceptedLater(SettleBatches into) {
        Delivery d;
        while ((d = acceptedLater.poll()) != null) {
            if (unhold(d.partition(), d.offset())) {
                into.add(d.partition(), d.offset(), ShareSettle.ACCEPT);
            }
        }
    }

    /** Everything waiting to be settled asynchronously (queued acceptances, pending gaps) joins {@code into}. Loop. */
    private void takePending(SettleBatches into) {
        drainAcceptedLater(into);
        pendingAsync.moveTo(into);
    }

    /** Sends the pending asynchronous settlements now, one ShareSettle at a time (more collect meanwhile). */
    private void maybeSettleAsync() {
        if (settleInFlight || pendingAsync.isEmpty() || controlChannel == null) {
            return;
        }
        settleInFlight = true;
        drainAcceptedLater(pendingAsync);
        sendSettle(pendingAsync).whenComplete((r, e) -> { // sendSettle takes the batches at once
            settleInFlight = false;
            maybeSettleAsync();
        });
    }

    private CompletableFuture<ShareSettle.Response> sendSettle(SettleBatches batches) {
        if (batches.isEmpty()) {
            return CompletableFuture.completedFuture(new ShareSettle.Response(Errors.NONE.code(), null, List.of()));
        }
        if (controlChannel == null || !controlChannel.isOpen()) {
            return CompletableFuture.failedFuture(new NotSentException());
        }
        ShareSettle.Request request = new ShareSettle.Request(groupId, memberId, batches.drain());
        return controlChannel.sendExtension(ExtensionApi.SHARE_SETTLE, ShareSettle.VERSION, request.toStruct())
                .thenApply(ShareSettle.Response::read)
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
            if (unhold(d.partition(), d.offset())) {
                into.add(d.partition(), d.offset(), ShareSettle.RETURN);
            }
        }
    }

    private void hold(int partition, long offset) {
        held.computeIfAbsent(partition, p -> new TreeSet<>()).add(offset);
    }

    /** Whether the offset was held (and now no longer is). */
    private boolean unhold(int partition, long offset) {
        TreeSet<Long> offsets = held.get(partition);
        return offsets != null && offsets.remove(offset);
    }

    /** Renews the locks of every held record each half lock duration. */
    private void scheduleRenewal() {
        renewal = loop.schedule(() -> {
            if (closed) {
                return;
            }
            if (controlChannel != null) {
                SettleBatches renew = new SettleBatches(topic);
                held.forEach((p, offsets) -> offsets.forEach(o -> renew.add(p, o, ShareSettle.RENEW)));
                sendSettle(renew);
            }
            scheduleRenewal();
        }, Math.max(500, lockDurationMs / 2), TimeUnit.MILLISECONDS);
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
            returnUnread(back);
            sendSettle(back);
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
