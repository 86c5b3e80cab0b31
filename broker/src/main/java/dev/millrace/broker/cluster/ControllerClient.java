package dev.millrace.broker.cluster;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.BrokerNotAvailableException;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.DeleteAclsRequestData;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.CreateAclsResponse;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.AllocateProducerIdsResponse;
import org.apache.kafka.common.requests.AlterUserScramCredentialsRequest;
import org.apache.kafka.common.requests.AlterUserScramCredentialsResponse;
import org.apache.kafka.common.requests.AlterConfigsResponse;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsResponse;
import org.apache.kafka.common.requests.AlterPartitionResponse;
import org.apache.kafka.common.requests.ElectLeadersResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;
import org.apache.kafka.common.requests.ListPartitionReassignmentsResponse;
import org.apache.kafka.common.requests.BrokerHeartbeatResponse;
import org.apache.kafka.common.requests.BrokerRegistrationResponse;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.Controller.AlterPartitionResult;
import dev.millrace.broker.controller.Controller.BrokerHeartbeat;
import dev.millrace.broker.controller.Controller.BrokerHeartbeatReply;
import dev.millrace.broker.controller.Controller.BrokerRegistration;
import dev.millrace.broker.controller.Controller.IsrChange;
import dev.millrace.broker.controller.Controller.NewTopic;
import dev.millrace.broker.controller.Controller.OngoingReassignment;
import dev.millrace.broker.controller.Controller.GroupConfigChange;
import dev.millrace.broker.controller.Controller.TopicConfigChange;
import dev.millrace.broker.controller.MetadataImage.BrokerImage;
import dev.millrace.broker.controller.ProducerIdBlock;
import dev.millrace.protocol.net.BrokerChannel;
import dev.millrace.protocol.net.ClientSecurity;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;

/**
 * How a broker asks the active controller for what only it may decide: registration, heartbeats, ISR changes,
 * producer-id blocks. Every node of a cluster is also a voter ({@code controller.quorum.voters}), so the local voter
 * knows which node is the active controller: when it is this node, the call goes to the local {@link Controller}
 * directly; otherwise it is sent, as the Kafka controller API of the same name (BrokerRegistration, BrokerHeartbeat,
 * AlterPartition, AllocateProducerIds, encoded with kafka-clients' message classes), to that node's Kafka listener,
 * whose address the node registered in the metadata ({@link ControllerApis} answers there).
 *
 * <p>Admin calls that clients may send to any broker (ElectLeaders, AlterPartitionReassignments,
 * ListPartitionReassignments, IncrementalAlterConfigs of topics and groups, AlterConfigs of topics) are forwarded the
 * same way, as the
 * same Kafka request. The node that receives a forwarded request answers it from its own controller and never
 * forwards it again: forwarded requests carry the client id {@link #CLIENT_ID_PREFIX}{@code <node id>}
 * ({@link #isForwarded}), so two nodes that disagree for a moment about which one is active cannot pass a request
 * back and forth.
 *
 * <p>A call is retried, after {@code retryBackoffMs}, while there is no active controller, while its node has not
 * registered its listener yet, when the answer is NOT_CONTROLLER (leadership moved meanwhile) or BROKER_NOT_AVAILABLE
 * (the active controller's node is still starting) or when the connection fails; it fails with a
 * {@link TimeoutException} naming the call and the last problem once {@code timeoutMs} has
 * passed. Any other error completes the call exceptionally with the kafka-clients exception of the error code.
 *
 * <p>Threading: thread-safe. One connection at a time (to the active controller's node), on one event-loop thread
 * owned by this client; futures complete on that thread or on the local controller's threads, so callers must not
 * block in dependent stages.
 */
public final class ControllerClient implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ControllerClient.class);

    /** The client id of this client's connections, followed by the sending node's id. */
    public static final String CLIENT_ID_PREFIX = "millrace-broker-";

    private final int nodeId;
    private final Controller local;
    private final long timeoutMs;
    private final long retryBackoffMs;
    private final ClientSecurity security;
    private final EventLoopGroup group;
    private final EventLoop loop;
    /** The connection to the active controller's node, and that node's id; guarded by {@code this}. */
    private CompletableFuture<BrokerChannel> channel;
    private int channelNode = -1;
    private volatile boolean closed;

    public ControllerClient(int nodeId, Controller local, long timeoutMs, long retryBackoffMs) {
        this(nodeId, local, timeoutMs, retryBackoffMs, ClientSecurity.PLAINTEXT);
    }

    /** @param security how to connect to the active controller's node (the inter-broker listener's protocol) */
    public ControllerClient(int nodeId, Controller local, long timeoutMs, long retryBackoffMs,
                            ClientSecurity security) {
        this.security = security;
        this.nodeId = nodeId;
        this.local = local;
        this.timeoutMs = timeoutMs;
        this.retryBackoffMs = retryBackoffMs;
        this.group = new NioEventLoopGroup(1, r -> {
            Thread thread = new Thread(r, "millrace-controller-client-" + nodeId);
            thread.setDaemon(true);
            return thread;
        });
        this.loop = group.next();
    }

    /** Registers this broker; completes with its broker epoch. */
    public CompletableFuture<Long> registerBroker(BrokerRegistration registration) {
        return call("BrokerRegistration", () -> local.registerBroker(registration),
                ch -> ch.<BrokerRegistrationResponse>send(ControllerMessages.registration(registration),
                        ApiKeys.BROKER_REGISTRATION.latestVersion()).thenApply(ControllerMessages::registrationEpoch));
    }

    public CompletableFuture<BrokerHeartbeatReply> heartbeat(BrokerHeartbeat heartbeat) {
        return call("BrokerHeartbeat", () -> local.brokerHeartbeat(heartbeat),
                ch -> ch.<BrokerHeartbeatResponse>send(ControllerMessages.heartbeat(heartbeat),
                        ApiKeys.BROKER_HEARTBEAT.latestVersion()).thenApply(ControllerMessages::heartbeatReply));
    }

    public CompletableFuture<Map<TopicIdPartition, AlterPartitionResult>> alterPartition(int brokerId,
            long brokerEpoch, List<IsrChange> changes) {
        return call("AlterPartition", () -> local.alterPartition(brokerId, brokerEpoch, changes),
                ch -> ch.<AlterPartitionResponse>send(ControllerMessages.alterPartition(brokerId, brokerEpoch,
                        changes), ApiKeys.ALTER_PARTITION.latestVersion())
                        .thenApply(ControllerMessages::alterPartitionResults));
    }

    public CompletableFuture<ProducerIdBlock> allocateProducerIds(int brokerId, long brokerEpoch) {
        return call("AllocateProducerIds", () -> local.allocateProducerIds(brokerId),
                ch -> ch.<AllocateProducerIdsResponse>send(ControllerMessages.allocateProducerIds(brokerId,
                        brokerEpoch), ApiKeys.ALLOCATE_PRODUCER_IDS.latestVersion())
                        .thenApply(response -> ControllerMessages.producerIdBlock(brokerId, response)));
    }

    /**
     * Creates topics (auto-creation, internal topics) at the active controller: with the local controller, or with
     * CreateTopics to the active controller's node. Per topic name, NONE or the error with its message.
     */
    public CompletableFuture<Map<String, ApiError>> createTopics(List<NewTopic> topics) {
        return call("CreateTopics",
                () -> local.createTopics(topics, false).thenApply(ControllerClient::orNotController),
                ch -> ch.<CreateTopicsResponse>send(ControllerMessages.createTopics(topics, (int) timeoutMs),
                        ApiKeys.CREATE_TOPICS.latestVersion())
                        .thenApply(response -> orNotController(ControllerMessages.createTopicsResults(response))));
    }

    /**
     * Whether a request with {@code clientId} was forwarded by another node's controller client: it is answered by
     * the receiving node's controller, never forwarded again.
     */
    public static boolean isForwarded(String clientId) {
        return clientId != null && clientId.startsWith(CLIENT_ID_PREFIX);
    }

    /**
     * Preferred or unclean leader election at the active controller ({@link Controller#electLeaders}).
     *
     * @param partitions null for every partition
     */
    public CompletableFuture<Map<TopicPartition, ApiError>> electLeaders(boolean preferred,
                                                                       Set<TopicPartition> partitions) {
        return call("ElectLeaders", () -> local.electLeaders(preferred, partitions),
                ch -> ch.<ElectLeadersResponse>send(ControllerMessages.electLeaders(preferred, partitions,
                        (int) timeoutMs), ApiKeys.ELECT_LEADERS.latestVersion())
                        .thenApply(ControllerMessages::electLeadersResults));
    }

    /** Partition reassignments at the active controller ({@link Controller#alterPartitionReassignments}). */
    public CompletableFuture<Map<TopicPartition, ApiError>> alterPartitionReassignments(
            Map<TopicPartition, Optional<List<Integer>>> reassignments) {
        return call("AlterPartitionReassignments", () -> local.alterPartitionReassignments(reassignments),
                ch -> ch.<AlterPartitionReassignmentsResponse>send(ControllerMessages.alterPartitionReassignments(
                        reassignments, (int) timeoutMs), ApiKeys.ALTER_PARTITION_REASSIGNMENTS.latestVersion())
                        .thenApply(ControllerMessages::alterPartitionReassignmentsResults));
    }

    /** The reassignments in progress, as the active controller knows them. */
    public CompletableFuture<Map<TopicPartition, OngoingReassignment>> listPartitionReassignments() {
        return call("ListPartitionReassignments", local::listPartitionReassignments,
                ch -> ch.<ListPartitionReassignmentsResponse>send(ControllerMessages.listPartitionReassignments(
                        (int) timeoutMs), ApiKeys.LIST_PARTITION_REASSIGNMENTS.latestVersion())
                        .thenApply(ControllerMessages::listPartitionReassignmentsResults));
    }

    /**
     * Topic config changes at the active controller ({@link Controller#alterTopicConfigs}): every change incremental
     * (sent as IncrementalAlterConfigs) or every one a {@link TopicConfigChange#replace() replace} (AlterConfigs).
     * Per topic name, NONE or the error with its message.
     */
    public CompletableFuture<Map<String, ApiError>> alterTopicConfigs(Map<String, TopicConfigChange> changes,
                                                                      boolean validateOnly) {
        boolean replace = ControllerMessages.allReplace(changes);
        return call(replace ? "AlterConfigs" : "IncrementalAlterConfigs",
                () -> local.alterTopicConfigs(changes, validateOnly).thenApply(ControllerClient::orNotController),
                ch -> replace
                        ? ch.<AlterConfigsResponse>send(ControllerMessages.alterConfigs(changes, validateOnly),
                                ApiKeys.ALTER_CONFIGS.latestVersion())
                        .thenApply(r -> orNotController(ControllerMessages.alterConfigsResults(r)))
                        : ch.<IncrementalAlterConfigsResponse>send(ControllerMessages.incrementalAlterConfigs(changes,
                                validateOnly), ApiKeys.INCREMENTAL_ALTER_CONFIGS.latestVersion())
                        .thenApply(r -> orNotController(ControllerMessages.incrementalAlterConfigsResults(r))));
    }

    /**
     * Group setting changes at the active controller ({@link Controller#alterGroupConfigs}), sent as
     * IncrementalAlterConfigs of {@code GROUP} resources. Per group id, NONE or the error with its message.
     */
    public CompletableFuture<Map<String, ApiError>> alterGroupConfigs(Map<String, GroupConfigChange> changes,
                                                                      boolean validateOnly) {
        return call("IncrementalAlterConfigs (groups)",
                () -> local.alterGroupConfigs(changes, validateOnly).thenApply(ControllerClient::orNotController),
                ch -> ch.<IncrementalAlterConfigsResponse>send(ControllerMessages.incrementalAlterGroupConfigs(changes,
                                validateOnly), ApiKeys.INCREMENTAL_ALTER_CONFIGS.latestVersion())
                        .thenApply(r -> orNotController(ControllerMessages.incrementalAlterConfigsResults(r))));
    }

    /**
     * SCRAM credential changes at the active controller ({@link Controller#alterUserScramCredentials}), sent as the
     * same AlterUserScramCredentials request (its upsertions carry salted passwords only). Per user, NONE or the
     * error with its message.
     */
    public CompletableFuture<Map<String, ApiError>> alterUserScramCredentials(
            AlterUserScramCredentialsRequestData request) {
        return call("AlterUserScramCredentials",
                () -> local.alterUserScramCredentials(request).thenApply(ControllerClient::orNotController),
                ch -> ch.<AlterUserScramCredentialsResponse>send(new AlterUserScramCredentialsRequest.Builder(
                                request.duplicate()), ApiKeys.ALTER_USER_SCRAM_CREDENTIALS.latestVersion())
                        .thenApply(r -> {
                            Map<String, ApiError> results = new java.util.LinkedHashMap<>();
                            r.data().results().forEach(u -> results.put(u.user(),
                                    new ApiError(Errors.forCode(u.errorCode()), u.errorMessage())));
                            return orNotController(results);
                        }));
    }

    /**
     * ACL creations at the active controller ({@link Controller#createAcls}), sent as CreateAcls. Per creation, in
     * order, NONE or the error with its message.
     */
    public CompletableFuture<List<ApiError>> createAcls(List<AclBinding> creations) {
        return call("CreateAcls",
                () -> local.createAcls(creations).thenApply(ControllerClient::orNotController),
                ch -> ch.<CreateAclsResponse>send(new CreateAclsRequest.Builder(new CreateAclsRequestData()
                                .setCreations(creations.stream().map(CreateAclsRequest::aclCreation).toList())),
                                ApiKeys.CREATE_ACLS.latestVersion())
                        .thenApply(r -> orNotController(r.results().stream()
                                .map(c -> new ApiError(Errors.forCode(c.errorCode()), c.errorMessage())).toList())));
    }

    /**
     * ACL deletions at the active controller ({@link Controller#deleteAcls}), sent as DeleteAcls. Per filter, in
     * order, the bindings it removed or its error.
     */
    public CompletableFuture<List<Controller.AclDeletion>> deleteAcls(List<AclBindingFilter> filters) {
        return call("DeleteAcls",
                () -> local.deleteAcls(filters).thenApply(ControllerClient::orNotControllerDeletions),
                ch -> ch.<DeleteAclsResponse>send(new DeleteAclsRequest.Builder(new DeleteAclsRequestData()
                                .setFilters(filters.stream().map(DeleteAclsRequest::deleteAclsFilter).toList())),
                                ApiKeys.DELETE_ACLS.latestVersion())
                        .thenApply(r -> orNotControllerDeletions(r.filterResults().stream()
                                .map(f -> new Controller.AclDeletion(new ApiError(Errors.forCode(f.errorCode()),
                                        f.errorMessage()), f.matchingAcls().stream()
                                        .map(DeleteAclsResponse::aclBinding).toList())).toList())));
    }

    /**
     * Client quota changes at the active controller ({@link Controller#alterClientQuotas}), sent as the same
     * AlterClientQuotas request. Per entry, in order, NONE or the error with its message.
     */
    public CompletableFuture<List<ApiError>> alterClientQuotas(
            List<org.apache.kafka.common.message.AlterClientQuotasRequestData.EntryData> entries,
            boolean validateOnly) {
        return call("AlterClientQuotas",
                () -> local.alterClientQuotas(entries, validateOnly).thenApply(ControllerClient::orNotController),
                ch -> ch.<org.apache.kafka.common.requests.AlterClientQuotasResponse>send(
                                alterClientQuotasRequest(entries, validateOnly),
                                ApiKeys.ALTER_CLIENT_QUOTAS.latestVersion())
                        .thenApply(r -> orNotController(r.data().entries().stream()
                                .map(e -> new ApiError(Errors.forCode(e.errorCode()), e.errorMessage())).toList())));
    }

    /** The request as the client sent it (kafka-clients' builder would merge an entity type given twice). */
    private static org.apache.kafka.common.requests.AbstractRequest.Builder<
            org.apache.kafka.common.requests.AlterClientQuotasRequest> alterClientQuotasRequest(
            List<org.apache.kafka.common.message.AlterClientQuotasRequestData.EntryData> entries,
            boolean validateOnly) {
        org.apache.kafka.common.message.AlterClientQuotasRequestData data =
                new org.apache.kafka.common.message.AlterClientQuotasRequestData().setValidateOnly(validateOnly)
                        .setEntries(entries.stream().map(e -> e.duplicate()).toList());
        return new org.apache.kafka.common.requests.AbstractRequest.Builder<>(ApiKeys.ALTER_CLIENT_QUOTAS) {
            @Override
            public org.apache.kafka.common.requests.AlterClientQuotasRequest build(short version) {
                return new org.apache.kafka.common.requests.AlterClientQuotasRequest(data.duplicate(), version);
            }
        };
    }

    private static List<ApiError> orNotController(List<ApiError> results) {
        for (ApiError error : results) {
            if (error.error() == Errors.NOT_CONTROLLER) {
                throw new NotControllerException(error.messageWithFallback());
            }
        }
        return results;
    }

    private static List<Controller.AclDeletion> orNotControllerDeletions(List<Controller.AclDeletion> results) {
        orNotController(results.stream().map(Controller.AclDeletion::error).toList());
        return results;
    }

    /** Turns a per-topic NOT_CONTROLLER (leadership moved while the request waited) into a retry of the whole call. */
    private static Map<String, ApiError> orNotController(Map<String, ApiError> results) {
        for (ApiError error : results.values()) {
            if (error.error() == Errors.NOT_CONTROLLER) {
                throw new NotControllerException(error.messageWithFallback());
            }
        }
        return results;
    }

    /** Closes the connection; calls in progress fail. Idempotent. */
    @Override
    public void close() {
        closed = true;
        synchronized (this) {
            dropChannel();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    private <T> CompletableFuture<T> call(String what, Supplier<CompletableFuture<T>> localCall,
                                          Function<BrokerChannel, CompletableFuture<? extends Object>> remoteCall) {
        CompletableFuture<T> result = new CompletableFuture<>();
        attempt(what, localCall, remoteCall, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs), result,
                "no attempt yet", null);
        return result;
    }

    @SuppressWarnings("unchecked")
    private <T> void attempt(String what, Supplier<CompletableFuture<T>> localCall,
                             Function<BrokerChannel, CompletableFuture<? extends Object>> remoteCall, long deadline,
                             CompletableFuture<T> result, String lastProblem, Throwable lastError) {
        if (closed) {
            result.completeExceptionally(new NotControllerException(what + " not sent: the broker is shutting down"));
            return;
        }
        if (System.nanoTime() - deadline > 0) {
            // the last error is the cause, so that callers can tell a refused login from a controller not answering
            result.completeExceptionally(new TimeoutException(what + " got no answer from an active controller within "
                    + timeoutMs + " ms; last problem: " + lastProblem, lastError));
            return;
        }
        Optional<Integer> active = local.activeControllerId();
        if (active.isEmpty()) {
            retry(what, localCall, remoteCall, deadline, result, "no active controller is known", null);
            return;
        }
        CompletableFuture<T> answer;
        if (active.get() == nodeId) {
            answer = localCall.get();
        } else {
            BrokerImage node = local.image().brokers().get(active.get());
            if (node == null) {
                retry(what, localCall, remoteCall, deadline, result, "the active controller, node " + active.get()
                        + ", has not registered its listener yet", null);
                return;
            }
            answer = channelTo(node).thenCompose(ch -> (CompletableFuture<T>) remoteCall.apply(ch));
        }
        answer.whenComplete((value, error) -> {
            if (error == null) {
                result.complete(value);
                return;
            }
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause()
                    : error;
            if (cause instanceof NotControllerException || cause instanceof BrokerNotAvailableException
                    || cause instanceof IOException) {
                if (cause instanceof IOException) {
                    synchronized (this) {
                        dropChannel();
                    }
                }
                retry(what, localCall, remoteCall, deadline, result, cause.toString(), cause);
            } else if (cause instanceof ApiException && !(cause instanceof TimeoutException)) {
                result.completeExceptionally(cause);
            } else {
                retry(what, localCall, remoteCall, deadline, result, cause.toString(), cause);
            }
        });
    }

    private <T> void retry(String what, Supplier<CompletableFuture<T>> localCall,
                           Function<BrokerChannel, CompletableFuture<? extends Object>> remoteCall, long deadline,
                           CompletableFuture<T> result, String problem, Throwable error) {
        LOG.debug("Node {}: {} will be retried: {}", nodeId, what, problem);
        try {
            loop.schedule(() -> attempt(what, localCall, remoteCall, deadline, result, problem, error), retryBackoffMs,
                    TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            result.completeExceptionally(new NotControllerException(what + " not sent: the broker is shutting down"));
        }
    }

    private synchronized CompletableFuture<BrokerChannel> channelTo(BrokerImage node) {
        if (channel != null && channelNode == node.id()) {
            BrokerChannel open = BrokerChannel.openOrNull(channel); // null after a failed connect: replaced below
            if (open == null && !channel.isDone() || open != null && open.isOpen()) {
                return channel;
            }
        }
        dropChannel();
        channelNode = node.id();
        channel = BrokerChannel.connect(loop, node.host(), node.port(), CLIENT_ID_PREFIX + nodeId,
                (int) Math.min(Integer.MAX_VALUE, timeoutMs), security);
        return channel;
    }

    private void dropChannel() {
        if (channel != null) {
            channel.thenAccept(BrokerChannel::close);
            channel = null;
            channelNode = -1;
        }
    }
}
