package dev.millrace.broker.controller;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.alipay.sofa.jraft.Node;
import com.alipay.sofa.jraft.Status;
import com.alipay.sofa.jraft.error.RaftError;

/**
 * The metadata controller on a SOFAJRaft quorum: one voter, in embedded mode the only one. A node
 * whose id is not among the voters ({@link ControllerConfig#isLearner()}) runs a learner of the same
 * quorum instead: it applies the same log into the same image and names the active controller
 * ({@link #activeControllerId()}), but never becomes active, so every request on it gets
 * NOT_CONTROLLER like on a follower voter.
 *
 * <p>A request runs as an event on this controller's single event thread, and only while this
 * voter is the active controller (between jraft's {@code onLeaderStart} and {@code onLeaderStop}):
 * a control manager validates it against the current image and computes records plus a per-entity
 * response without changing anything; the records are proposed as one quorum log entry bound to
 * the leader's term; the state machine replays them into the next image on every voter; then the
 * caller's future completes with the computed response. Events are serialised and the next event
 * runs only once the previous proposal has settled (applied, or failed), so every event is
 * validated against an image that already holds every earlier change: of two concurrent creates of
 * one topic exactly one succeeds, the other gets TOPIC_ALREADY_EXISTS. (At leadership start jraft
 * has applied every earlier term's entry, and a proposal from an old term is refused by jraft's
 * term check; replay still checks its invariants and stops the state machine if one is broken.)
 *
 * <p>On a voter that is not the active controller every entity gets NOT_CONTROLLER, naming the
 * leader when it is known; the caller (the broker's network layer) should retry there. A proposal
 * that fails because leadership was lost also gives NOT_CONTROLLER: the entry may still be
 * committed by the next leader, as in Kafka. A request not applied within {@code requestTimeout}
 * gives REQUEST_TIMED_OUT. Nothing is proposed for validate-only requests or when every entity
 * failed validation. {@link #allocateProducerIds} has no entities: its future fails instead, with the
 * kafka-clients exception of the same error ({@code NotControllerException}, {@code TimeoutException}).
 *
 * <p>Membership and elections: broker registrations, heartbeats, ISR changes and leader elections are
 * events like the others ({@link ClusterControlManager}, {@link ReplicationControlManager}). Broker
 * liveness is in memory on the active controller ({@link BrokerSessions}, read with the injected
 * {@link Time}); a voter that becomes active starts every registered broker's session afresh and, at
 * leadership start, commits its {@link ControllerConfig#initialClusterId()} if the image has no cluster
 * id yet. On the event thread a periodic check (every quarter of the session timeout, at most every
 * second; {@link #runPeriodicChecks()} runs it at once) fences the brokers whose session expired, and
 * every {@code leaderImbalanceCheckInterval} a preferred-leader election runs for every partition.
 *
 * <p>Threading: thread-safe. A future completes on the event thread (after close, on the thread
 * that settled it; REQUEST_TIMED_OUT on the JDK's delay thread), and for a committed change only
 * after the image and the listeners have seen it; dependent actions must not block. Listeners run
 * on jraft's state-machine thread.
 */
public final class RaftController implements Controller {

    private static final Logger LOG = LoggerFactory.getLogger(RaftController.class);
    /** How soon a leader start that failed (the quorum node was still starting) is tried again. */
    private static final long LEADER_START_RETRY_MS = 100;

    private final ControllerConfig config;
    private final String logPrefix;
    private final MetadataStateMachine stateMachine;
    private final MetadataQuorum quorum;
    private final TopicControlManager topicControl;
    private final ConfigControlManager configControl;
    private final ScramControlManager scramControl = new ScramControlManager();
    private final AclControlManager aclControl = new AclControlManager();
    private final ClientQuotaControlManager quotaControl = new ClientQuotaControlManager();
    private final ProducerIdControlManager producerIdControl = new ProducerIdControlManager();
    private final ReplicationControlManager replicationControl;
    private final ReassignmentControlManager reassignmentControl = new ReassignmentControlManager();
    private final ClusterControlManager clusterControl;
    private final BrokerSessions sessions;
    private final Time time;
    private final ScheduledExecutorService eventExecutor;
    private volatile EndpointProbe endpointProbe = EndpointProbe.NONE;
    private volatile GroupConfigPolicy groupConfigPolicy = GroupConfigPolicy.NONE;
    private final Object queueLock = new Object();

    private CompletableFuture<Void> queueTail = CompletableFuture.completedFuture(null);
    private volatile boolean closed;

    public RaftController(ControllerConfig config) {
        this(config, Time.SYSTEM);
    }

    /** @param time the clock broker sessions are measured with */
    public RaftController(ControllerConfig config, Time time) {
        this.config = Objects.requireNonNull(config, "config");
        this.time = Objects.requireNonNull(time, "time");
        this.logPrefix = "[Controller id=" + config.nodeId() + " " + config.address() + "] ";
        this.stateMachine = new MetadataStateMachine(logPrefix);
        this.quorum = new MetadataQuorum(config, stateMachine, logPrefix);
        this.configControl = new ConfigControlManager();
        this.topicControl = new TopicControlManager(configControl, config.defaultNumPartitions(),
                config.defaultReplicationFactor(), Uuid::randomUuid);
        this.replicationControl = new ReplicationControlManager(config.uncleanLeaderElection());
        this.clusterControl = new ClusterControlManager(replicationControl);
        this.sessions = new BrokerSessions(config.brokerSessionTimeout().toMillis());
        this.stateMachine.registerLeaderStartListener(term -> onLeaderStart());
        this.eventExecutor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "millrace-controller-event-" + config.nodeId());
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Starts the voter and waits until a leader is elected and this voter has applied every committed
     * entry (raft log and snapshot).
     *
     * @throws java.util.concurrent.TimeoutException when that takes longer than {@code startTimeout};
     *         the voter is then stopped
     * @throws java.io.IOException when the quorum port cannot be bound or the data directory opened
     */
    @Override
    public void start() throws Exception {
        if (closed) {
            throw new IllegalStateException(logPrefix + "closed controllers cannot be started");
        }
        quorum.start();
        long tickMs = Math.max(10, Math.min(1000, Math.min(config.brokerSessionTimeout().toMillis(),
                config.brokerUnreachableGrace().toMillis()) / 4));
        eventExecutor.scheduleWithFixedDelay(() -> {
            if (isActive()) {
                runPeriodicChecks();
            }
        }, tickMs, tickMs, TimeUnit.MILLISECONDS);
        long imbalanceMs = config.leaderImbalanceCheckInterval().toMillis();
        if (imbalanceMs > 0) {
            eventExecutor.scheduleWithFixedDelay(() -> {
                if (isActive()) {
                    runLeaderImbalanceCheck();
                }
            }, imbalanceMs, imbalanceMs, TimeUnit.MILLISECONDS);
        }
    }

    /** Queues the leader-start event: commit the initial cluster id when the image has none. */
    private void onLeaderStart() {
        submitEvent("LeaderStart", "cluster id", false,
                image -> clusterControl.handleLeaderStart(image, config.initialClusterId()), RaftController::failWith)
                .whenComplete((ignored, error) -> {
                    if (error != null) {
                        LOG.warn("{}Could not commit the initial cluster id: {}", logPrefix, error.toString());
                        retryLeaderStart();
                    }
                });
    }

    /**
     * A failed leader start is tried again while this voter is still the active controller: a single voter elects
     * itself while the quorum node is still starting, and its first proposal can find no node yet ("not running"),
     * which would otherwise leave the cluster without a cluster id for good.
     */
    private void retryLeaderStart() {
        if (closed) {
            return;
        }
        try {
            eventExecutor.schedule(() -> {
                if (!closed && isActive() && image().clusterId() == null) {
                    onLeaderStart();
                }
            }, LEADER_START_RETRY_MS, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing
        }
    }

    /**
     * Fences the brokers whose session has expired (normally run periodically on the event thread).
     *
     * @return the ids of the brokers it fenced
     */
    CompletableFuture<List<Integer>> runPeriodicChecks() {
        return submitEvent("SessionExpiry", "brokers", false,
                image -> clusterControl.handleSessionExpiry(image, sessions, time.milliseconds()),
                RaftController::failWith).whenComplete((fenced, error) -> {
                    if (fenced != null && !fenced.isEmpty()) {
                        LOG.info("{}Fenced brokers {}: no heartbeat within {} ms", logPrefix, fenced,
                                config.brokerSessionTimeout().toMillis());
                    }
                });
    }

    /** Preferred-leader election for every partition (normally run every leaderImbalanceCheckInterval). */
    CompletableFuture<Map<TopicPartition, ApiError>> runLeaderImbalanceCheck() {
        return electLeaders(true, null).whenComplete((result, error) -> {
            if (result != null) {
                long moved = result.values().stream().filter(e -> e.error() == Errors.NONE).count();
                if (moved > 0) {
                    LOG.info("{}Preferred-leader check moved {} leadership(s) back", logPrefix, moved);
                }
            }
        });
    }

    @Override
    public MetadataImage image() {
        return stateMachine.image();
    }

    @Override
    public void registerListener(MetadataListener listener) {
        stateMachine.registerListener(Objects.requireNonNull(listener, "listener"));
    }

    /** Whether this voter is the active controller now. */
    public boolean isActive() {
        return stateMachine.leaderTerm() >= 0;
    }

    /** Completes with the raft term once this voter is the active controller (at once if it is). */
    public CompletableFuture<Long> whenActive() {
        return stateMachine.whenActive();
    }

    /** The active controller's quorum address {@code host:port}, if known. */
    public Optional<String> leaderAddress() {
        return quorum.leaderAddress();
    }

    /** Snapshots the image now (besides the periodic snapshots); completes when saved. */
    public CompletableFuture<Void> snapshot() {
        return quorum.snapshot();
    }

    public ControllerConfig config() {
        return config;
    }

    @Override
    public CompletableFuture<Map<String, ApiError>> createTopics(List<NewTopic> topics, boolean validateOnly) {
        List<NewTopic> request = List.copyOf(topics);
        List<String> names = request.stream().map(NewTopic::name).toList();
        return submit("CreateTopics", names, validateOnly, image -> topicControl.handleCreateTopics(image, request));
    }

    @Override
    public CompletableFuture<Map<String, ApiError>> deleteTopics(Collection<String> names) {
        List<String> request = List.copyOf(names);
        return submit("DeleteTopics", request, false, image -> topicControl.handleDeleteTopics(image, request));
    }

    @Override
    public CompletableFuture<Map<String, ApiError>> createPartitions(Map<String, Integer> totalCounts,
                                                                     boolean validateOnly) {
        Map<String, Integer> request = new LinkedHashMap<>(totalCounts);
        return submit("CreatePartitions", request.keySet(), validateOnly,
                image -> topicControl.handleCreatePartitions(image, request));
    }

    @Override
    public CompletableFuture<Map<String, ApiError>> alterTopicConfigs(Map<String, TopicConfigChange> changes,
                                                                      boolean validateOnly) {
        Map<String, TopicConfigChange> request = new LinkedHashMap<>(changes);
        return submit("AlterConfigs", request.keySet(), validateOnly,
                image -> configControl.handleAlterConfigs(image, request));
    }

    @Override
    public CompletableFuture<Map<String, ApiError>> alterGroupConfigs(Map<String, GroupConfigChange> changes,
                                                                      boolean validateOnly) {
        Map<String, GroupConfigChange> request = new LinkedHashMap<>(changes);
        GroupConfigPolicy policy = groupConfigPolicy;
        return submit("AlterGroupConfigs", request.keySet(), validateOnly,
                image -> configControl.handleAlterGroupConfigs(image, policy, request));
    }

    @Override
    public CompletableFuture<Map<String, ApiError>> alterUserScramCredentials(
            org.apache.kafka.common.message.AlterUserScramCredentialsRequestData request) {
        java.util.Set<String> users = new java.util.LinkedHashSet<>();
        request.deletions().forEach(d -> users.add(d.name()));
        request.upsertions().forEach(u -> users.add(u.name()));
        org.apache.kafka.common.message.AlterUserScramCredentialsRequestData copy = request.duplicate();
        return submit("AlterUserScramCredentials", users, false, image -> scramControl.handleAlter(image, copy));
    }

    @Override
    public CompletableFuture<List<ApiError>> createAcls(List<org.apache.kafka.common.acl.AclBinding> creations) {
        List<org.apache.kafka.common.acl.AclBinding> copy = List.copyOf(creations);
        return submitEvent("CreateAcls", copy.size() + " bindings", false,
                image -> aclControl.handleCreate(image, copy),
                (response, error, message) -> response.complete(java.util.Collections.nCopies(copy.size(),
                        new ApiError(error, message))));
    }

    @Override
    public CompletableFuture<List<ApiError>> alterClientQuotas(
            List<org.apache.kafka.common.message.AlterClientQuotasRequestData.EntryData> entries,
            boolean validateOnly) {
        List<org.apache.kafka.common.message.AlterClientQuotasRequestData.EntryData> copy = entries.stream()
                .map(org.apache.kafka.common.message.AlterClientQuotasRequestData.EntryData::duplicate).toList();
        return submitEvent("AlterClientQuotas", copy.size() + " entities", validateOnly,
                image -> quotaControl.handleAlter(image, copy, validateOnly),
                (response, error, message) -> response.complete(java.util.Collections.nCopies(copy.size(),
                        new ApiError(error, message))));
    }

    @Override
    public CompletableFuture<List<AclDeletion>> deleteAcls(
            List<org.apache.kafka.common.acl.AclBindingFilter> filters) {
        List<org.apache.kafka.common.acl.AclBindingFilter> copy = List.copyOf(filters);
        return submitEvent("DeleteAcls", copy.size() + " filters", false,
                image -> aclControl.handleDelete(image, copy),
                (response, error, message) -> response.complete(java.util.Collections.nCopies(copy.size(),
                        new AclDeletion(new ApiError(error, message), List.of()))));
    }

    /**
     * What settings groups may have ({@link #alterGroupConfigs}); {@link GroupConfigPolicy#NONE} unless set. Set
     * before {@link #start}.
     */
    public void setGroupConfigPolicy(GroupConfigPolicy policy) {
        this.groupConfigPolicy = Objects.requireNonNull(policy, "policy");
    }

    /**
     * {@inheritDoc}
     *
     * <p>Runs as one event like the other requests: the block starts at the image's next producer
     * id, and its {@link MetadataRecord.ProducerIdsRecord} is committed before the future completes.
     * Failures complete the future exceptionally with kafka-clients' exceptions:
     * {@link org.apache.kafka.common.errors.NotControllerException} (naming the leader when known)
     * when this voter is not the active controller, is closed or lost leadership before the record
     * was applied; {@link org.apache.kafka.common.errors.TimeoutException} after
     * {@code requestTimeout}; {@link org.apache.kafka.common.errors.InvalidRequestException} for a
     * negative broker id; {@link org.apache.kafka.common.errors.UnknownServerException} otherwise.
     */
    @Override
    public CompletableFuture<ProducerIdBlock> allocateProducerIds(int brokerId) {
        return submitEvent("AllocateProducerIds", "broker " + brokerId, false,
                image -> producerIdControl.handleAllocateProducerIds(image, brokerId),
                (response, error, message) -> response.completeExceptionally(error.exception(message)));
    }

    @Override
    public Optional<Integer> activeControllerId() {
        return leaderAddress().flatMap(address -> config.voters().entrySet().stream()
                .filter(voter -> voter.getValue().equals(address)).map(Map.Entry::getKey).findFirst());
    }

    @Override
    public CompletableFuture<Long> registerBroker(BrokerRegistration registration) {
        Objects.requireNonNull(registration, "registration");
        return submitEvent("RegisterBroker", "broker " + registration.brokerId(), false,
                image -> clusterControl.handleRegisterBroker(image, registration, sessions, time.milliseconds()),
                RaftController::failWith);
    }

    /**
     * How a broker that looks dead is checked ({@link EndpointProbe}); {@link EndpointProbe#NONE} (the grace alone)
     * unless set. Set before {@link #start}.
     */
    public void setEndpointProbe(EndpointProbe probe) {
        this.endpointProbe = Objects.requireNonNull(probe, "probe");
    }

    @Override
    public void brokerUnreachable(int brokerId) {
        runIfActive(() -> suspect(brokerId, "lost its connection to the active controller"));
    }

    /** Runs {@code task} on the event thread if this voter is the active controller, after a new term's reset. */
    private void runIfActive(Runnable task) {
        try {
            eventExecutor.execute(() -> {
                long term = stateMachine.leaderTerm();
                if (closed || term < 0) {
                    return;
                }
                if (sessions.resetIfNewTerm(term, stateMachine.image(), time.milliseconds())) {
                    suspectPreviousLeader();
                }
                task.run();
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed
        }
    }

    /**
     * On the event thread: the broker's session ends within the unreachable grace unless it heartbeats; if a probe
     * of its endpoint is refused (the process is gone) it is fenced at once, provided it has not registered again
     * (a new epoch) in the meantime.
     */
    private void suspect(int brokerId, String why) {
        MetadataImage.BrokerImage broker = stateMachine.image().brokers().get(brokerId);
        if (broker == null || broker.state() == BrokerState.FENCED) {
            return;
        }
        long graceMs = config.brokerUnreachableGrace().toMillis();
        sessions.suspect(brokerId, time.milliseconds(), graceMs);
        LOG.info("{}Broker {} {}: fenced in {} ms unless it heartbeats", logPrefix, brokerId, why, graceMs);
        long epoch = broker.epoch();
        endpointProbe.refuses(broker.host(), broker.port()).thenAccept(refused -> {
            if (refused) {
                runIfActive(() -> {
                    MetadataImage.BrokerImage now = stateMachine.image().brokers().get(brokerId);
                    if (now != null && now.epoch() == epoch && now.state() != BrokerState.FENCED) {
                        sessions.suspect(brokerId, time.milliseconds(), -1);
                        LOG.info("{}Broker {} refuses connections on {}:{}: fencing it now", logPrefix, brokerId,
                                broker.host(), broker.port());
                        runPeriodicChecks();
                    }
                });
            }
        });
    }

    /**
     * At the start of this voter's leadership: the broker on the node whose voter led before is most likely dead
     * (a leader that merely lost an election keeps heartbeating as a broker), so its session ends within the
     * unreachable grace unless it heartbeats, instead of a whole session timeout after this voter took over.
     */
    private void suspectPreviousLeader() {
        stateMachine.lastFollowedLeader().flatMap(address -> config.voters().entrySet().stream()
                .filter(voter -> voter.getValue().equals(address)).map(Map.Entry::getKey).findFirst())
                .filter(id -> id != config.nodeId())
                .ifPresent(id -> suspect(id, "ran the previous active controller"));
    }

    @Override
    public CompletableFuture<BrokerHeartbeatReply> brokerHeartbeat(BrokerHeartbeat heartbeat) {
        Objects.requireNonNull(heartbeat, "heartbeat");
        // the broker was heard from when its heartbeat arrived, not when the event queue reached it: events wait for
        // the Raft commits of those before them, and a session check queued earlier must not fence a broker whose
        // heartbeat is already waiting behind it
        long arrivedMs = time.milliseconds();
        return submitEvent("BrokerHeartbeat", "broker " + heartbeat.brokerId(), false,
                image -> clusterControl.handleBrokerHeartbeat(image, heartbeat, sessions, arrivedMs),
                RaftController::failWith);
    }

    @Override
    public CompletableFuture<Map<TopicIdPartition, AlterPartitionResult>> alterPartition(int brokerId,
            long brokerEpoch, List<IsrChange> changes) {
        List<IsrChange> request = List.copyOf(changes);
        return submitEvent("AlterPartition", "broker " + brokerId + " " + request, false, image -> {
            ClusterControlManager.checkEpoch(image, brokerId, brokerEpoch, "AlterPartition");
            ClusterDelta delta = new ClusterDelta(image);
            Map<TopicIdPartition, AlterPartitionResult> response =
                    replicationControl.alterPartition(delta, brokerId, request);
            return new ControllerResult<>(delta.records(), response);
        }, RaftController::failWith);
    }

    @Override
    public CompletableFuture<Map<TopicPartition, ApiError>> electLeaders(boolean preferred,
                                                                       Set<TopicPartition> partitions) {
        Set<TopicPartition> request = partitions == null ? null : Set.copyOf(partitions);
        return submitEvent("ElectLeaders", request == null ? "every partition" : request.toString(), false,
                image -> {
                    ClusterDelta delta = new ClusterDelta(image);
                    Map<TopicPartition, ApiError> response = replicationControl.electLeaders(delta, preferred, request);
                    return new ControllerResult<>(delta.records(), response);
                }, RaftController::failWith);
    }

    @Override
    public CompletableFuture<Map<TopicPartition, ApiError>> alterPartitionReassignments(
            Map<TopicPartition, Optional<List<Integer>>> reassignments) {
        Map<TopicPartition, Optional<List<Integer>>> request = new LinkedHashMap<>(reassignments);
        return submitEvent("AlterPartitionReassignments", request.keySet().toString(), false, image -> {
            ClusterDelta delta = new ClusterDelta(image);
            Map<TopicPartition, ApiError> response = reassignmentControl.alterReassignments(delta, request);
            return new ControllerResult<>(delta.records(), response);
        }, RaftController::failWith);
    }

    @Override
    public CompletableFuture<Map<TopicPartition, OngoingReassignment>> listPartitionReassignments() {
        return submitEvent("ListPartitionReassignments", "every partition", false,
                image -> new ControllerResult<>(List.of(), ReassignmentControlManager.ongoing(image)),
                RaftController::failWith);
    }

    private static <T> void failWith(CompletableFuture<T> response, Errors error, String message) {
        response.completeExceptionally(error.exception(message));
    }

    /** The quorum node, for diagnostics and tests; null when not running. */
    Node quorumNode() {
        return quorum.node();
    }

    /** Stops the voter; pending and later requests get NOT_CONTROLLER. Idempotent. */
    @Override
    public void close() {
        closed = true;
        quorum.close();
        eventExecutor.shutdown();
        try {
            if (!eventExecutor.awaitTermination(10, TimeUnit.SECONDS)) {
                LOG.warn("{}The controller event thread did not stop within 10 s", logPrefix);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private CompletableFuture<Map<String, ApiError>> submit(String operation, Collection<String> entities,
            boolean validateOnly, Function<MetadataImage, ControllerResult<Map<String, ApiError>>> handler) {
        List<String> names = List.copyOf(entities);
        return submitEvent(operation, names.toString(), validateOnly, handler,
                (response, error, message) -> response.complete(errors(names, error, message)));
    }

    /**
     * Queues one event. {@code failure} tells the caller of an error that is not the handler's own
     * response (not the controller, timed out, not applied, handler bug); {@code subject} names the
     * request's entities in log lines.
     */
    private <T> CompletableFuture<T> submitEvent(String operation, String subject, boolean validateOnly,
            Function<MetadataImage, ControllerResult<T>> handler, Failure<T> failure) {
        CompletableFuture<T> response = new CompletableFuture<>();
        long timeoutMs = config.requestTimeout().toMillis();
        CompletableFuture<Void> timer = new CompletableFuture<Void>()
                .completeOnTimeout(null, timeoutMs, TimeUnit.MILLISECONDS);
        timer.thenRun(() -> failure.fail(response, Errors.REQUEST_TIMED_OUT,
                operation + " was not applied within " + timeoutMs + " ms"));
        response.whenComplete((value, error) -> timer.cancel(false));
        synchronized (queueLock) {
            queueTail = queueTail
                    .thenComposeAsync(ignored -> runEvent(operation, subject, validateOnly, handler, response,
                            failure), eventExecutor)
                    .handle((ignored, error) -> {
                        if (error != null) {
                            failure.fail(response, Errors.NOT_CONTROLLER, notControllerMessage());
                        }
                        return null;
                    });
        }
        return response;
    }

    /** Runs one event on the event thread; the returned future completes when its proposal settled. */
    private <T> CompletableFuture<Void> runEvent(String operation, String subject, boolean validateOnly,
            Function<MetadataImage, ControllerResult<T>> handler, CompletableFuture<T> response,
            Failure<T> failure) {
        long term = stateMachine.leaderTerm();
        if (response.isDone()) {
            return CompletableFuture.completedFuture(null);
        }
        if (closed || term < 0) {
            failure.fail(response, Errors.NOT_CONTROLLER, notControllerMessage());
            return CompletableFuture.completedFuture(null);
        }
        ControllerResult<T> result;
        try {
            if (sessions.resetIfNewTerm(term, stateMachine.image(), time.milliseconds())) {
                suspectPreviousLeader();
            }
            result = handler.apply(stateMachine.image());
        } catch (ApiException e) {
            failure.fail(response, Errors.forException(e), e.getMessage());
            return CompletableFuture.completedFuture(null);
        } catch (RuntimeException e) {
            LOG.error("{}{} failed unexpectedly for {}", logPrefix, operation, subject, e);
            failure.fail(response, Errors.UNKNOWN_SERVER_ERROR, operation + " failed: " + e);
            return CompletableFuture.completedFuture(null);
        }
        if (validateOnly || result.records().isEmpty()) {
            response.complete(result.response());
            return CompletableFuture.completedFuture(null);
        }
        ProposalClosure closure = new ProposalClosure();
        quorum.propose(MetadataRecordSerde.encode(result.records()), term, closure);
        return closure.settled().thenAccept(status -> onProposalSettled(operation, subject, status, result,
                response, failure));
    }

    private <T> void onProposalSettled(String operation, String subject, Status status, ControllerResult<T> result,
                                       CompletableFuture<T> response, Failure<T> failure) {
        Runnable settle;
        if (status.isOk()) {
            long appliedIndex = stateMachine.image().appliedIndex();
            settle = () -> {
                if (result.onApplied() != null) {
                    result.onApplied().accept(appliedIndex);
                }
                response.complete(result.response());
            };
        } else {
            LOG.info("{}{} for {} was not applied: {}", logPrefix, operation, subject, status);
            Errors error = errorFor(status);
            String message = operation + " was not applied: " + status.getErrorMsg()
                    + (error == Errors.NOT_CONTROLLER ? "; " + notControllerMessage() : "");
            settle = () -> failure.fail(response, error, message);
        }
        try {
            eventExecutor.execute(settle);
        } catch (RejectedExecutionException e) {
            settle.run();
        }
    }

    private static Errors errorFor(Status status) {
        RaftError error = status.getRaftError();
        if (error == null) {
            return Errors.UNKNOWN_SERVER_ERROR;
        }
        switch (error) {
            case EPERM:
            case ENEWLEADER:
            case ELEADERREMOVED:
            case ELEADERCONFLICT:
            case ESTALE:
            case ESHUTDOWN:
            case ENODESHUTDOWN:
            case ETRANSFERLEADERSHIP:
                return Errors.NOT_CONTROLLER;
            case EBUSY:
            case ETIMEDOUT:
            case ERAFTTIMEDOUT:
                return Errors.REQUEST_TIMED_OUT;
            default:
                return Errors.UNKNOWN_SERVER_ERROR;
        }
    }

    private String notControllerMessage() {
        if (closed) {
            return "Controller " + config.nodeId() + " is shut down";
        }
        return "Controller " + config.nodeId() + " (" + config.address() + ") is not the active controller; "
                + leaderAddress().map(leader -> "the leader is " + leader).orElse("no leader is known");
    }

    private static Map<String, ApiError> errors(Collection<String> names, Errors error, String message) {
        Map<String, ApiError> result = new LinkedHashMap<>();
        for (String name : names) {
            result.put(name, new ApiError(error, message));
        }
        return result;
    }

    /** Tells an event's caller of a failure that is not the event's computed response. */
    @FunctionalInterface
    private interface Failure<T> {
        void fail(CompletableFuture<T> response, Errors error, String message);
    }
}
