package dev.millrace.broker.share;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData.ListedGroup;
import org.apache.kafka.common.message.ShareGroupDescribeResponseData;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.ListGroupsResponse;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeResponse;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.apache.kafka.common.requests.ShareGroupDescribeRequest;
import org.apache.kafka.common.requests.ShareGroupDescribeResponse;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;

import dev.millrace.broker.coordinator.CoordinatorElection;
import dev.millrace.broker.coordinator.CoordinatorLocator;
import dev.millrace.delay.Time;
import dev.millrace.delay.Timer;
import dev.millrace.delay.TimerTask;
import dev.millrace.protocol.net.ClientSecurity;

/**
 * The share-group side of a broker, built once and handed to the request router: the coordinator,
 * the share-partitions, share sessions, the long-poll purgatory and the dead-letter publisher,
 * wired together. One entry point per share API, each returning the response as a future.
 *
 * <p>Two daemon threads of its own: one re-tries parked fetches when a share-partition signals
 * records (so no request or timer thread ever re-enters a partition it holds) or a member lookup
 * ends, one writes dead-letter copies in order; and, once it follows group leadership, the event
 * loop of its ShareMember client.
 *
 * <p>Lifecycle: construct, serve, {@link #close()}. Thread-safe.
 */
public final class ShareBroker implements AutoCloseable {

    private static final long PURGE_INTERVAL_MS = 10_000;
    private static final int MEMBER_LOOKUP_TIMEOUT_MS = 5_000;
    private static final long MEMBER_LOOKUP_BACKOFF_MS = 200;
    private static final int MEMBER_CACHE_ENTRIES = 10_000;

    private final ShareGroupCoordinator coordinator;
    private final SharePartitionManager partitions;
    private final ShareSessionCache sessions = new ShareSessionCache();
    private final ShareFetchPurgatory purgatory;
    private final ShareFetchHandler fetchHandler;
    private final ShareAcknowledgeHandler acknowledgeHandler;
    private final ShareGroupConfigHandler groupConfigHandler;
    private final ShareGroupConfigs groupSettings;
    private final ShareGroupAdmin admin;
    private final ShareBrowseHandler browseHandler;
    private final ShareTransactions transactions;
    private final ExecutorService events = Executors.newSingleThreadExecutor(r -> daemon(r, "millrace-share-events"));
    private final java.util.concurrent.ScheduledExecutorService deadLetters =
            Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "millrace-share-dead-letters"));
    private final Timer timer;
    private final ShareSettleHandler settleHandler;
    private volatile boolean closed;
    private volatile ShareStateHandler stateHandler;
    private final MemberViews members;
    private final ShareMemberHandler memberHandler;
    private final ShareGroupConfig config;
    private final Time time;
    private volatile RemoteMemberLookup memberLookup;

    public ShareBroker(ShareGroupConfig config, ShareTopics topics, ShareStateStore store, Timer timer, Time time) {
        this.config = Objects.requireNonNull(config, "config");
        this.time = Objects.requireNonNull(time, "time");
        this.timer = Objects.requireNonNull(timer, "timer");
        this.purgatory = new ShareFetchPurgatory(timer);
        DeadLetterPublisher publisher = new DeadLetterPublisher(topics, time, deadLetters);
        StateSaves saves = new StateSaves(store);
        SharePartitionListener listener = new SharePartitionListener() {
            @Override
            public void onRecordsAvailable(SharePartitionKey key) {
                if (!closed) {
                    events.execute(() -> purgatory.onChange(key.topicPartition()));
                }
            }

            @Override
            public void onArchived(DeadLetter deadLetter) {
                // the copy, if the topic has a dead-letter topic, is owed by the partition: onDeadLetterCopiesOwed
            }

            @Override
            public void onDeadLetterCopiesOwed(SharePartition partition) {
                if (!closed) {
                    saves.afterSave(partition, () -> publisher.drain(partition));
                }
            }

            @Override
            public void onStateChanged(SharePartition partition) {
                saves.changed(partition);
            }
        };
        this.partitions = new SharePartitionManager(config, topics, timer, time, listener, store);
        this.groupSettings = new ShareGroupConfigs(config);
        partitions.setGroupConfigs(groupSettings);
        this.groupConfigHandler = new ShareGroupConfigHandler(groupSettings);
        this.coordinator = new ShareGroupCoordinator(config, topics, timer, this::onMemberRemoved);
        this.members = new MemberViews(coordinator);
        this.memberHandler = new ShareMemberHandler(coordinator);
        this.fetchHandler = new ShareFetchHandler(config, topics, partitions, sessions, purgatory, members, saves);
        this.admin = new ShareGroupAdmin(coordinator, partitions, store, topics);
        this.acknowledgeHandler = new ShareAcknowledgeHandler(config, topics, partitions, sessions);
        this.browseHandler = new ShareBrowseHandler(topics, partitions);
        this.transactions = new ShareTransactions(topics, partitions);
        this.settleHandler = new ShareSettleHandler(partitions);
        timer.add(new Purge());
    }

    public CompletableFuture<ShareGroupHeartbeatResponse> handleShareGroupHeartbeat(ShareGroupHeartbeatRequest request,
                                                                                    String clientId,
                                                                                    String clientHost) {
        return CompletableFuture.completedFuture(new ShareGroupHeartbeatResponse(
                coordinator.heartbeat(request.data(), clientId, clientHost)));
    }

    /** A ShareFetch that came on connection {@code connectionId} (see {@link #onConnectionClosed}). */
    public CompletableFuture<ShareFetchResponse> handleShareFetch(ShareFetchRequest request, String connectionId) {
        return fetchHandler.handle(request, connectionId);
    }

    /** Connection {@code connectionId} closed: its parked ShareFetches acquire nothing more. Does not block. */
    public void onConnectionClosed(String connectionId) {
        fetchHandler.connectionClosed(connectionId);
    }

    /** How many parked ShareFetches were abandoned because their connection closed (since start). */
    public long abandonedFetches() {
        return fetchHandler.abandonedFetches();
    }

    public CompletableFuture<ShareAcknowledgeResponse> handleShareAcknowledge(ShareAcknowledgeRequest request) {
        return CompletableFuture.completedFuture(acknowledgeHandler.handle(request));
    }

    public CompletableFuture<ShareGroupDescribeResponse> handleShareGroupDescribe(ShareGroupDescribeRequest request) {
        return CompletableFuture.completedFuture(new ShareGroupDescribeResponse(new ShareGroupDescribeResponseData()
                .setGroups(coordinator.describe(request.data().groupIds()))));
    }

    /**
     * Adds the share groups to a ListGroups response of the classic coordinator, unless the
     * request's type filter excludes {@code share}; the state filter applies to them too.
     */
    public ListGroupsResponse withShareGroups(ListGroupsRequest request, ListGroupsResponse classic) {
        List<String> types = request.data().typesFilter();
        if (classic.data().errorCode() != 0
                || (!types.isEmpty() && types.stream().noneMatch(ShareGroupCoordinator.GROUP_TYPE::equalsIgnoreCase))) {
            return classic;
        }
        List<ListedGroup> shareGroups = coordinator.list(request.data().statesFilter());
        ListGroupsResponseData data = classic.data().duplicate();
        data.groups().addAll(shareGroups);
        return new ListGroupsResponse(data);
    }

    /** The ShareBrowse extension: records still on a queue, without acquiring them. */
    public ShareBrowseHandler browse() {
        return browseHandler;
    }

    /** The ShareSettle extension: a member's acknowledgements outside its share session. */
    public ShareSettleHandler settle() {
        return settleHandler;
    }

    /** The TxnShareAcknowledge extension: acceptances inside producer transactions. */
    public ShareTransactions transactions() {
        return transactions;
    }

    /** The share-group offset admin APIs and share-group deletion. */
    public ShareGroupAdmin admin() {
        return admin;
    }

    /** IncrementalAlterConfigs and DescribeConfigs of GROUP resources. */
    public ShareGroupConfigHandler groupConfigs() {
        return groupConfigHandler;
    }

    /** The groups' settings in force here; the broker feeds them from its metadata image. */
    public ShareGroupConfigs groupSettings() {
        return groupSettings;
    }

    /** Records were appended to {@code tp}: wake share fetches waiting on it. */
    public void onAppend(TopicPartition tp) {
        purgatory.onChange(tp);
    }

    /**
     * Makes the share-group coordinator serve only the groups whose {@code __consumer_offsets} partition this broker
     * leads; returns what the broker registers with its elections of that topic.
     */
    public CoordinatorElection followGroupLeadership(int offsetsPartitions) {
        return coordinator.followLeadership(offsetsPartitions);
    }

    /**
     * As {@link #followGroupLeadership(int)}, and the share-partitions led here learn the members (and selectors) of
     * groups coordinated on other brokers from those brokers ({@link RemoteMemberCache}, ShareMember extension):
     * {@code offsetsLeaders} locates the leader of a partition of {@code __consumer_offsets}. An answer naming a
     * member is used for one share-group session timeout before it is asked again. Those brokers are reached with
     * {@code security} (the inter-broker listener's protocol).
     */
    public CoordinatorElection followGroupLeadership(int offsetsPartitions, CoordinatorLocator offsetsLeaders,
                                                     int nodeId, ClientSecurity security) {
        RemoteMemberLookup lookup = new RemoteMemberLookup(offsetsLeaders, offsetsPartitions, nodeId,
                MEMBER_LOOKUP_TIMEOUT_MS, security);
        memberLookup = lookup;
        members.lookUpRemoteMembers(new RemoteMemberCache(lookup, time, events, config.sessionTimeoutMs(),
                MEMBER_LOOKUP_BACKOFF_MS, MEMBER_CACHE_ENTRIES));
        return coordinator.followLeadership(offsetsPartitions);
    }

    /** Serves the ShareMember extension (other brokers' share-partition leaders asking about members). */
    public ShareMemberHandler memberHandler() {
        return memberHandler;
    }

    /** Serves the ShareState extension (other brokers' share-state reads and writes); set once, before serving. */
    public void setStateHandler(ShareStateHandler stateHandler) {
        this.stateHandler = stateHandler;
    }

    /** The ShareState extension's handler; null when this broker runs no share-state coordinator. */
    public ShareStateHandler stateHandler() {
        return stateHandler;
    }

    /** The share-partitions, for tests and admin. */
    public SharePartitionManager partitions() {
        return partitions;
    }

    private void onMemberRemoved(String groupId, String memberId) {
        sessions.close(groupId, memberId);
        partitions.releaseMember(groupId, memberId);
    }

    @Override
    public void close() {
        closed = true;
        RemoteMemberLookup lookup = memberLookup;
        if (lookup != null) {
            lookup.close();
        }
        transactions.close();
        events.shutdown();
        deadLetters.shutdown();
        try {
            events.awaitTermination(5, TimeUnit.SECONDS);
            deadLetters.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /** Drops completed fetches from the purgatory's watcher lists every ten seconds. */
    private final class Purge extends TimerTask {
        Purge() {
            super(PURGE_INTERVAL_MS);
        }

        @Override
        public void run() {
            purgatory.purgeCompleted();
            if (!closed) {
                try {
                    timer.add(new Purge());
                } catch (IllegalStateException timerClosed) {
                    // the broker is stopping
                }
            }
        }
    }
}
