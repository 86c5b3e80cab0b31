package dev.millrace.broker.server;

import java.nio.ByteBuffer;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AlterClientQuotasRequest;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.DescribeClientQuotasRequest;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.ElectLeadersRequest;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.DescribeTransactionsRequest;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.ListTransactionsRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.AlterUserScramCredentialsRequest;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DeleteShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareGroupDescribeRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;

import dev.millrace.broker.cluster.ControllerClient;
import dev.millrace.broker.group.GroupCoordinator;
import dev.millrace.broker.network.ApiVersionTable;
import dev.millrace.broker.network.RequestHandler;
import dev.millrace.broker.share.ShareBroker;
import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ExtensionHeader;
import dev.millrace.protocol.ext.ShareBrowse;
import dev.millrace.protocol.ext.ShareSettle;
import dev.millrace.protocol.ext.ShareState;
import dev.millrace.protocol.ext.TxnAddSharePartition;
import dev.millrace.protocol.ext.TxnShareAcknowledge;
import dev.millrace.protocol.selector.MemberSelector;

/**
 * Routes each Kafka API to its handler. {@link #VERSIONS} is what ApiVersions advertises; an API
 * that is not listed there never reaches this class (the connection answers or closes first).
 *
 * <p>Thread-safe; called on request threads.
 */
public final class KafkaApis implements RequestHandler {

    /**
     * APIs and versions served. Produce and Fetch stop at 12, the last versions that name topics;
     * AddPartitionsToTxn at 4 (clients send at most 3; 4 is the brokers' verify-only request, {@link TxnVerifier}),
     * EndTxn at 4 and TxnOffsetCommit at 5, and no {@code transaction.version} feature is advertised, so clients run
     * transaction version 1 (no epoch bump per transaction).
     */
    public static final ApiVersionTable VERSIONS = new ApiVersionTable.Builder()
            .addAll(ApiKeys.API_VERSIONS)
            // answered before authentication by dev.millrace.broker.security.SaslAuthenticator on SASL listeners
            .add(ApiKeys.SASL_HANDSHAKE, 1, 1)
            .addAll(ApiKeys.SASL_AUTHENTICATE)
            .add(ApiKeys.METADATA, 0, ApiKeys.METADATA.latestVersion())
            .add(ApiKeys.PRODUCE, 3, 12)
            .add(ApiKeys.FETCH, 4, 12)
            .addAll(ApiKeys.LIST_OFFSETS)
            .addAll(ApiKeys.OFFSET_FOR_LEADER_EPOCH)
            .addAll(ApiKeys.CREATE_TOPICS)
            .addAll(ApiKeys.DELETE_TOPICS)
            .addAll(ApiKeys.CREATE_PARTITIONS)
            .addAll(ApiKeys.DESCRIBE_CONFIGS)
            .addAll(ApiKeys.ALTER_CONFIGS)
            .addAll(ApiKeys.INCREMENTAL_ALTER_CONFIGS)
            .addAll(ApiKeys.ELECT_LEADERS)
            .addAll(ApiKeys.ALTER_PARTITION_REASSIGNMENTS)
            .addAll(ApiKeys.LIST_PARTITION_REASSIGNMENTS)
            .addAll(ApiKeys.DELETE_RECORDS)
            .addAll(ApiKeys.INIT_PRODUCER_ID)
            .addAll(ApiKeys.FIND_COORDINATOR)
            .addAll(ApiKeys.JOIN_GROUP)
            .addAll(ApiKeys.SYNC_GROUP)
            .addAll(ApiKeys.HEARTBEAT)
            .addAll(ApiKeys.LEAVE_GROUP)
            .addAll(ApiKeys.OFFSET_COMMIT)
            .addAll(ApiKeys.OFFSET_FETCH)
            .addAll(ApiKeys.DESCRIBE_GROUPS)
            .addAll(ApiKeys.LIST_GROUPS)
            .addAll(ApiKeys.DELETE_GROUPS)
            .add(ApiKeys.ADD_PARTITIONS_TO_TXN, 0, 4)
            .addAll(ApiKeys.ADD_OFFSETS_TO_TXN)
            .add(ApiKeys.END_TXN, 0, 4)
            .add(ApiKeys.TXN_OFFSET_COMMIT, 0, 5)
            .addAll(ApiKeys.DESCRIBE_TRANSACTIONS)
            .addAll(ApiKeys.LIST_TRANSACTIONS)
            .addAll(ApiKeys.DESCRIBE_PRODUCERS)
            .addAll(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS)
            .addAll(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS)
            .addAll(ApiKeys.CREATE_ACLS)
            .addAll(ApiKeys.DESCRIBE_ACLS)
            .addAll(ApiKeys.DELETE_ACLS)
            .addAll(ApiKeys.ALTER_CLIENT_QUOTAS)
            .addAll(ApiKeys.DESCRIBE_CLIENT_QUOTAS)
            // from other brokers' transaction coordinators and Admin.abortTransaction (versions 1-2)
            .addAll(ApiKeys.WRITE_TXN_MARKERS)
            // share groups (KIP-932), the versions kafka-clients 4.4 speaks
            .add(ApiKeys.SHARE_GROUP_HEARTBEAT, 1, 1)
            .add(ApiKeys.SHARE_GROUP_DESCRIBE, 1, 1)
            .add(ApiKeys.SHARE_FETCH, 1, 2)
            .add(ApiKeys.SHARE_ACKNOWLEDGE, 1, 2)
            .addAll(ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS)
            .addAll(ApiKeys.ALTER_SHARE_GROUP_OFFSETS)
            .addAll(ApiKeys.DELETE_SHARE_GROUP_OFFSETS)
            // between nodes, answered by the active controller (dev.millrace.broker.cluster.ControllerApis)
            .addAll(ApiKeys.BROKER_REGISTRATION)
            .addAll(ApiKeys.BROKER_HEARTBEAT)
            .addAll(ApiKeys.ALTER_PARTITION)
            .addAll(ApiKeys.ALLOCATE_PRODUCER_IDS)
            // Millrace extensions (dev.millrace.protocol.ext)
            .addExtension(ExtensionApi.SHARE_BROWSE)
            .addExtension(ExtensionApi.TXN_SHARE_ACKNOWLEDGE)
            .addExtension(ExtensionApi.SHARE_SETTLE)
            .addExtension(ExtensionApi.SHARE_STATE)
            .addExtension(ExtensionApi.SHARE_MEMBER)
            .addExtension(ExtensionApi.TXN_ADD_SHARE_PARTITION)
            .addExtension(ExtensionApi.XA_PREPARE)
            .addExtension(ExtensionApi.XA_COMPLETE)
            .addExtension(ExtensionApi.XA_RECOVER)
            .build();

    private final MetadataHandler metadata;
    private final ProduceHandler produce;
    private final FetchHandler fetch;
    private final ListOffsetsHandler listOffsets;
    private final OffsetsForLeaderEpochHandler offsetsForLeaderEpoch;
    private final TopicAdminHandler topicAdmin;
    private final PartitionAdminHandler partitionAdmin;
    private final DeleteRecordsHandler deleteRecords;
    private final InitProducerIdHandler initProducerId;
    private final GroupCoordinator groups;
    private final FindCoordinatorHandler findCoordinator;
    private final TransactionHandler transactions;
    private volatile ScramAdminHandler scramAdmin;
    private volatile AclAdminHandler aclAdmin;
    private volatile ClientQuotaAdminHandler quotaAdmin;
    private final Map<ApiKeys, LongAdder> requestCounts = new EnumMap<>(ApiKeys.class);
    private volatile ShareBroker shares;
    private volatile WriteTxnMarkersHandler writeTxnMarkers;
    private volatile ShareOffsetsRouting shareOffsets;

    KafkaApis(MetadataHandler metadata, ProduceHandler produce, FetchHandler fetch, ListOffsetsHandler listOffsets,
              OffsetsForLeaderEpochHandler offsetsForLeaderEpoch, TopicAdminHandler topicAdmin,
              PartitionAdminHandler partitionAdmin, DeleteRecordsHandler deleteRecords, InitProducerIdHandler initProducerId,
              GroupCoordinator groups, TransactionHandler transactions, FindCoordinatorHandler findCoordinator) {
        this.transactions = transactions;
        this.findCoordinator = findCoordinator;
        this.deleteRecords = deleteRecords;
        this.initProducerId = initProducerId;
        this.groups = groups;
        for (ApiKeys key : ApiKeys.values()) {
            requestCounts.put(key, new LongAdder());
        }
        this.metadata = metadata;
        this.produce = produce;
        this.fetch = fetch;
        this.listOffsets = listOffsets;
        this.offsetsForLeaderEpoch = offsetsForLeaderEpoch;
        this.topicAdmin = topicAdmin;
        this.partitionAdmin = partitionAdmin;
    }

    @Override
    public CompletableFuture<Struct> handleExtension(ExtensionHeader header, ByteBuffer body) {
        ShareBroker shareBroker = shares;
        ExtensionApi api = ExtensionApi.forKey(header.apiKey()).orElseThrow();
        return switch (api) {
            case SHARE_BROWSE -> CompletableFuture.completedFuture(
                    shareBroker.browse().browse(ShareBrowse.Request.read(body)).toStruct());
            case TXN_SHARE_ACKNOWLEDGE -> shareBroker.transactions().acknowledge(TxnShareAcknowledge.Request.read(body))
                    .thenApply(TxnShareAcknowledge.Response::toStruct);
            case SHARE_SETTLE -> CompletableFuture.completedFuture(
                    shareBroker.settle().handle(ShareSettle.Request.read(body)).toStruct());
            case SHARE_STATE -> shareBroker.stateHandler() == null
                    ? CompletableFuture.completedFuture(ShareState.Response.error(Errors.NOT_COORDINATOR.code(),
                            "This broker runs no share-state coordinator").toStruct())
                    : shareBroker.stateHandler().handle(body);
            case SHARE_MEMBER -> CompletableFuture.completedFuture(shareBroker.memberHandler().handle(body));
            case TXN_ADD_SHARE_PARTITION -> transactions.addSharePartition(TxnAddSharePartition.Request.read(body))
                    .thenApply(TxnAddSharePartition.Response::toStruct);
            case XA_PREPARE, XA_COMPLETE, XA_RECOVER -> XaHandler.handle(api, body, transactions.coordinator());
        };
    }

    /** Serves the share-group APIs with {@code shares}; set once, before the first request. */
    void setShareBroker(ShareBroker shares) {
        this.shares = shares;
    }

    /** Serves the share-group offset APIs with {@code routing}; set once, before the first request. */
    void setShareOffsetsRouting(ShareOffsetsRouting routing) {
        this.shareOffsets = routing;
    }

    /** Serves Alter/DescribeUserScramCredentials with {@code handler}; set once, before the first request. */
    void setScramAdminHandler(ScramAdminHandler handler) {
        this.scramAdmin = handler;
    }

    /** Serves Create/Describe/DeleteAcls with {@code handler}; set once, before the first request. */
    void setAclAdminHandler(AclAdminHandler handler) {
        this.aclAdmin = handler;
    }

    /** Serves Alter/DescribeClientQuotas with {@code handler}; set once, before the first request. */
    void setClientQuotaAdminHandler(ClientQuotaAdminHandler handler) {
        this.quotaAdmin = handler;
    }

    /** Serves WriteTxnMarkers with {@code handler}; set once, before the first request. */
    void setWriteTxnMarkersHandler(WriteTxnMarkersHandler handler) {
        this.writeTxnMarkers = handler;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(RequestContext context, AbstractRequest request) {
        short version = context.apiVersion();
        requestCounts.get(context.header.apiKey()).increment();
        switch (context.header.apiKey()) {
            case API_VERSIONS:
                return done(apiVersions((ApiVersionsRequest) request));
            case METADATA:
                return metadata.handle((MetadataRequest) request, version, context.listenerName).thenApply(r -> r);
            case PRODUCE: {
                ProduceRequest produceRequest = (ProduceRequest) request;
                return produce.handle(produceRequest).thenApply(r -> produceRequest.acks() == 0 ? null
                        : metadata.endpoints().forListener(r, context.listenerName));
            }
            case FETCH:
                return fetch.handle((FetchRequest) request).thenApply(r -> r);
            case LIST_OFFSETS:
                return done(listOffsets.handle((ListOffsetsRequest) request));
            case OFFSET_FOR_LEADER_EPOCH:
                return done(offsetsForLeaderEpoch.handle((OffsetsForLeaderEpochRequest) request));
            case CREATE_TOPICS:
                return topicAdmin.createTopics((CreateTopicsRequest) request).thenApply(r -> r);
            case DELETE_TOPICS:
                return topicAdmin.deleteTopics((DeleteTopicsRequest) request).thenApply(r -> r);
            case CREATE_PARTITIONS:
                return topicAdmin.createPartitions((CreatePartitionsRequest) request).thenApply(r -> r);
            case DESCRIBE_CONFIGS:
                return done(shares == null ? topicAdmin.describeConfigs((DescribeConfigsRequest) request)
                        : GroupConfigRouting.describeConfigs((DescribeConfigsRequest) request, version, topicAdmin,
                                shares.groupConfigs()));
            case ALTER_CONFIGS:
                return topicAdmin.alterConfigs((AlterConfigsRequest) request, forwarded(context)).thenApply(r -> r);
            case INCREMENTAL_ALTER_CONFIGS:
                return GroupConfigRouting.incrementalAlterConfigs((IncrementalAlterConfigsRequest) request, version,
                        topicAdmin, forwarded(context)).thenApply(r -> r);
            case ELECT_LEADERS:
                return partitionAdmin.electLeaders((ElectLeadersRequest) request, forwarded(context))
                        .thenApply(r -> r);
            case ALTER_PARTITION_REASSIGNMENTS:
                return partitionAdmin.alterPartitionReassignments((AlterPartitionReassignmentsRequest) request,
                        forwarded(context)).thenApply(r -> r);
            case LIST_PARTITION_REASSIGNMENTS:
                return partitionAdmin.listPartitionReassignments((ListPartitionReassignmentsRequest) request,
                        forwarded(context)).thenApply(r -> r);
            case DELETE_RECORDS:
                return done(deleteRecords.handle((DeleteRecordsRequest) request));
            case INIT_PRODUCER_ID: {
                InitProducerIdRequest init = (InitProducerIdRequest) request;
                return (init.data().transactionalId() == null ? initProducerId.handle(init)
                        : transactions.initProducerId(init)).thenApply(r -> r);
            }
            case ADD_PARTITIONS_TO_TXN:
                return transactions.addPartitions((AddPartitionsToTxnRequest) request).thenApply(r -> r);
            case ADD_OFFSETS_TO_TXN:
                return transactions.addOffsets((AddOffsetsToTxnRequest) request).thenApply(r -> r);
            case END_TXN:
                return transactions.endTxn((EndTxnRequest) request).thenApply(r -> r);
            case TXN_OFFSET_COMMIT:
                return groups.handleTxnOffsetCommit((TxnOffsetCommitRequest) request).thenApply(r -> r);
            case WRITE_TXN_MARKERS:
                return writeTxnMarkers.handle((WriteTxnMarkersRequest) request).thenApply(r -> r);
            case DESCRIBE_TRANSACTIONS:
                return done(transactions.describeTransactions((DescribeTransactionsRequest) request));
            case LIST_TRANSACTIONS:
                return done(transactions.listTransactions((ListTransactionsRequest) request));
            case DESCRIBE_PRODUCERS:
                return done(transactions.describeProducers((DescribeProducersRequest) request));
            case FIND_COORDINATOR:
                return findCoordinator.handle((FindCoordinatorRequest) request, version, context.listenerName)
                        .thenApply(r -> r);
            case JOIN_GROUP:
                return groups.handleJoinGroup((JoinGroupRequest) request, version, context.clientId(),
                        context.clientAddress.toString()).thenApply(r -> r);
            case SYNC_GROUP:
                return groups.handleSyncGroup((SyncGroupRequest) request).thenApply(r -> r);
            case HEARTBEAT:
                return groups.handleHeartbeat((HeartbeatRequest) request).thenApply(r -> r);
            case LEAVE_GROUP:
                return groups.handleLeaveGroup((LeaveGroupRequest) request, version).thenApply(r -> r);
            case OFFSET_COMMIT:
                return groups.handleOffsetCommit((OffsetCommitRequest) request, version).thenApply(r -> r);
            case OFFSET_FETCH:
                return groups.handleOffsetFetch((OffsetFetchRequest) request, version).thenApply(r -> r);
            case DESCRIBE_GROUPS:
                return groups.handleDescribeGroups((DescribeGroupsRequest) request, version).thenApply(r -> r);
            case LIST_GROUPS:
                return groups.handleListGroups((ListGroupsRequest) request)
                        .thenApply(r -> shares == null ? r : shares.withShareGroups((ListGroupsRequest) request, r));
            case DELETE_GROUPS:
                return (shares == null ? groups.handleDeleteGroups((DeleteGroupsRequest) request, version)
                        : ShareAdminRouting.deleteGroups((DeleteGroupsRequest) request, version, groups, shares.admin(),
                                shareOffsets))
                        .thenApply(r -> r);
            case SHARE_GROUP_HEARTBEAT:
                return shares.handleShareGroupHeartbeat((ShareGroupHeartbeatRequest) request, context.clientId(),
                        context.clientAddress.toString()).thenApply(r -> r);
            case SHARE_GROUP_DESCRIBE:
                return shares.handleShareGroupDescribe((ShareGroupDescribeRequest) request).thenApply(r -> r);
            case SHARE_FETCH:
                return shares.handleShareFetch((ShareFetchRequest) request, context.connectionId)
                        .thenApply(r -> metadata.endpoints().forListener(r, context.listenerName));
            case SHARE_ACKNOWLEDGE:
                return shares.handleShareAcknowledge((ShareAcknowledgeRequest) request)
                        .thenApply(r -> metadata.endpoints().forListener(r, context.listenerName));
            // served by each share-partition's leader: ShareOffsetsRouting passes them on from the group's coordinator
            case DESCRIBE_SHARE_GROUP_OFFSETS:
                return shareOffsets.describe(((DescribeShareGroupOffsetsRequest) request).data(), version,
                        forwarded(context)).thenApply(r -> r);
            case ALTER_SHARE_GROUP_OFFSETS:
                return shareOffsets.alter(((AlterShareGroupOffsetsRequest) request).data(), version,
                        forwarded(context)).thenApply(r -> r);
            case DELETE_SHARE_GROUP_OFFSETS:
                return shareOffsets.delete(((DeleteShareGroupOffsetsRequest) request).data(), version,
                        forwarded(context)).thenApply(r -> r);
            case ALTER_USER_SCRAM_CREDENTIALS:
                return scramAdmin.alter((AlterUserScramCredentialsRequest) request, forwarded(context))
                        .thenApply(r -> r);
            case DESCRIBE_USER_SCRAM_CREDENTIALS:
                return done(scramAdmin.describe((DescribeUserScramCredentialsRequest) request));
            case CREATE_ACLS:
                return aclAdmin.create((CreateAclsRequest) request, forwarded(context)).thenApply(r -> r);
            case DESCRIBE_ACLS:
                return done(aclAdmin.describe((DescribeAclsRequest) request, version));
            case DELETE_ACLS:
                return aclAdmin.delete((DeleteAclsRequest) request, version, forwarded(context)).thenApply(r -> r);
            case ALTER_CLIENT_QUOTAS:
                return quotaAdmin.alter((AlterClientQuotasRequest) request, forwarded(context)).thenApply(r -> r);
            case DESCRIBE_CLIENT_QUOTAS:
                return done(quotaAdmin.describe((DescribeClientQuotasRequest) request));
            default:
                return CompletableFuture.failedFuture(new UnsupportedVersionException(
                        "API " + context.header.apiKey() + " is not served by this broker"));
        }
    }

    /** How many requests of {@code key} this broker has handled since it started. */
    public long requestCount(ApiKeys key) {
        return requestCounts.get(key).sum();
    }

    /** How many parked ShareFetches were abandoned because their connection closed (since start). */
    public long abandonedShareFetches() {
        ShareBroker current = shares;
        return current == null ? 0 : current.abandonedFetches();
    }

    /** A connection closed: parked ShareFetches that came on it acquire nothing more. On its network thread. */
    @Override
    public void onConnectionClosed(String connectionId) {
        ShareBroker current = shares;
        if (current != null) {
            current.onConnectionClosed(connectionId);
        }
    }

    private static ApiVersionsResponse apiVersions(ApiVersionsRequest request) {
        ApiVersionsResponseData data = VERSIONS.toResponseData();
        // Millrace protocol extensions that ride on standard fields, advertised so that clients can check for them
        data.supportedFeatures().add(new ApiVersionsResponseData.SupportedFeatureKey().setName(MemberSelector.FEATURE)
                .setMinVersion(MemberSelector.FEATURE_LEVEL).setMaxVersion(MemberSelector.FEATURE_LEVEL));
        if (request.hasUnsupportedRequestVersion()) {
            data.setErrorCode(Errors.UNSUPPORTED_VERSION.code());
        } else if (!request.isValid()) {
            data.setErrorCode(Errors.INVALID_REQUEST.code());
        }
        return new ApiVersionsResponse(data);
    }

    /**
     * Whether another node's controller client forwarded this request to this node's controller (see
     * {@link ControllerClient}); such a request is answered here, never forwarded again.
     */
    private static boolean forwarded(RequestContext context) {
        return ControllerClient.isForwarded(context.clientId());
    }

    private static CompletableFuture<AbstractResponse> done(AbstractResponse response) {
        return CompletableFuture.completedFuture(response);
    }
}
