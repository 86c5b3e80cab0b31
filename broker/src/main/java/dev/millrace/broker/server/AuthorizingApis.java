package dev.millrace.broker.server;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.message.FetchRequestData.FetchPartition;
import org.apache.kafka.common.message.FetchRequestData.FetchTopic;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.message.MetadataRequestData.MetadataRequestTopic;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponseTopic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.resource.ResourceType;

import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.protocol.ext.ExtensionHeader;
import dev.millrace.broker.network.RequestHandler;
import dev.millrace.broker.security.AclAuthorizer;

/**
 * Checks each request against the {@link AclAuthorizer} before {@link KafkaApis} serves it, with Kafka's operations
 * and errors. A request that names a resource the principal may not use is answered, whole, with the API's error
 * response for that error (every topic, partition or group of it carries the error); Metadata is answered per
 * topic (a requested topic that may not be described gets TOPIC_AUTHORIZATION_FAILED, and a request for all topics
 * lists only those that may be described), and a consumer's Fetch per partition (see {@link #refusedFetch}).
 * <pre>
 *   Produce                      WRITE topic (and WRITE transactional id when transactional)
 *   Fetch (consumer)             READ topic;  Fetch from a follower: CLUSTER_ACTION cluster
 *   ListOffsets, Metadata        DESCRIBE topic
 *   CreateTopics / DeleteTopics  CREATE (cluster or topic) / DELETE topic
 *   Join/Sync/Heartbeat/Leave    READ group;  OffsetCommit: READ group + READ topic;  OffsetFetch: DESCRIBE group
 *   FindCoordinator              DESCRIBE group or transactional id;  DeleteGroups: DELETE group
 *   ShareGroupHeartbeat          READ group;  ShareFetch, ShareAcknowledge: READ group + READ topic
 *   InitProducerId, EndTxn,      WRITE transactional id (AddOffsetsToTxn, TxnOffsetCommit: also READ group)
 *   AddPartitionsToTxn           (version 4, verify only, from brokers: CLUSTER_ACTION cluster)
 *   Create/DeleteAcls, AlterUserScramCredentials        ALTER cluster
 *   DescribeAcls, DescribeUserScramCredentials          DESCRIBE cluster
 *   WriteTxnMarkers, ElectLeaders, reassignments         CLUSTER_ACTION / ALTER cluster
 *   AlterClientQuotas / DescribeClientQuotas             ALTER_CONFIGS / DESCRIBE_CONFIGS cluster
 * </pre>
 * Other APIs and the Millrace extension APIs are not checked yet.
 *
 * <p>Thread-safe; called on request threads.
 */
final class AuthorizingApis implements RequestHandler {

    private static final String CLUSTER = "kafka-cluster";

    private final RequestHandler apis;
    private final AclAuthorizer authorizer;
    private final Supplier<MetadataImage> image;

    AuthorizingApis(RequestHandler apis, AclAuthorizer authorizer, Supplier<MetadataImage> image) {
        this.apis = apis;
        this.authorizer = authorizer;
        this.image = image;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(RequestContext context, AbstractRequest request) {
        Check check = new Check(context);
        ApiException denied = switch (context.header.apiKey()) {
            case METADATA -> null;
            case PRODUCE -> produce(check, (ProduceRequest) request);
            case FETCH -> fetch(check, (FetchRequest) request);
            case LIST_OFFSETS -> topics(check, AclOperation.DESCRIBE, ((ListOffsetsRequest) request).data().topics()
                    .stream().map(t -> t.name()).toList());
            case CREATE_TOPICS -> check.cluster(AclOperation.CREATE) ? null : topics(check, AclOperation.CREATE,
                    ((CreateTopicsRequest) request).data().topics().stream().map(t -> t.name()).toList());
            case DELETE_TOPICS -> topics(check, AclOperation.DELETE, ((DeleteTopicsRequest) request).topicNames());
            case JOIN_GROUP -> group(check, AclOperation.READ, ((JoinGroupRequest) request).data().groupId());
            case SYNC_GROUP -> group(check, AclOperation.READ, ((SyncGroupRequest) request).data().groupId());
            case HEARTBEAT -> group(check, AclOperation.READ, ((HeartbeatRequest) request).data().groupId());
            case LEAVE_GROUP -> group(check, AclOperation.READ, ((LeaveGroupRequest) request).data().groupId());
            case OFFSET_COMMIT -> first(group(check, AclOperation.READ, ((OffsetCommitRequest) request).data()
                    .groupId()), topics(check, AclOperation.READ, ((OffsetCommitRequest) request).data().topics()
                    .stream().map(t -> t.name()).toList()));
            case OFFSET_FETCH -> groups(check, AclOperation.DESCRIBE, ((OffsetFetchRequest) request).groupIds());
            case DELETE_GROUPS -> groups(check, AclOperation.DELETE, ((DeleteGroupsRequest) request).data()
                    .groupsNames());
            case FIND_COORDINATOR -> findCoordinator(check, (FindCoordinatorRequest) request);
            case SHARE_GROUP_HEARTBEAT -> group(check, AclOperation.READ, ((ShareGroupHeartbeatRequest) request)
                    .data().groupId());
            case SHARE_FETCH -> first(group(check, AclOperation.READ, ((ShareFetchRequest) request).data().groupId()),
                    topics(check, AclOperation.READ, names(((ShareFetchRequest) request).data().topics().stream()
                            .map(t -> t.topicId()).toList())));
            case SHARE_ACKNOWLEDGE -> first(group(check, AclOperation.READ, ((ShareAcknowledgeRequest) request)
                    .data().groupId()), topics(check, AclOperation.READ, names(((ShareAcknowledgeRequest) request)
                    .data().topics().stream().map(t -> t.topicId()).toList())));
            case INIT_PRODUCER_ID -> transactionalId(check, ((InitProducerIdRequest) request).data()
                    .transactionalId());
            case END_TXN -> transactionalId(check, ((EndTxnRequest) request).data().transactionalId());
            case ADD_PARTITIONS_TO_TXN -> addPartitions(check, (AddPartitionsToTxnRequest) request);
            case ADD_OFFSETS_TO_TXN -> first(transactionalId(check, ((AddOffsetsToTxnRequest) request).data()
                    .transactionalId()), group(check, AclOperation.READ, ((AddOffsetsToTxnRequest) request).data()
                    .groupId()));
            case TXN_OFFSET_COMMIT -> first(transactionalId(check, ((TxnOffsetCommitRequest) request).data()
                    .transactionalId()), group(check, AclOperation.READ, ((TxnOffsetCommitRequest) request).data()
                    .groupId()));
            case CREATE_ACLS, DELETE_ACLS, ALTER_USER_SCRAM_CREDENTIALS, ELECT_LEADERS,
                    ALTER_PARTITION_REASSIGNMENTS -> cluster(check, AclOperation.ALTER);
            case DESCRIBE_ACLS, DESCRIBE_USER_SCRAM_CREDENTIALS, LIST_PARTITION_REASSIGNMENTS ->
                    cluster(check, AclOperation.DESCRIBE);
            case WRITE_TXN_MARKERS -> cluster(check, AclOperation.CLUSTER_ACTION);
            case ALTER_CLIENT_QUOTAS -> cluster(check, AclOperation.ALTER_CONFIGS);
            case DESCRIBE_CLIENT_QUOTAS -> cluster(check, AclOperation.DESCRIBE_CONFIGS);
            default -> null;
        };
        if (denied != null) {
            return CompletableFuture.completedFuture(request.getErrorResponse(denied));
        }
        if (request instanceof MetadataRequest metadata) {
            return metadata(check, context, metadata);
        }
        if (denied == null && request instanceof FetchRequest fetch && !fetch.isFromFollower()) {
            FetchResponse refused = refusedFetch(check, fetch);
            if (refused != null) {
                return CompletableFuture.completedFuture(refused);
            }
        }
        return apis.handle(context, request);
    }

    @Override
    public CompletableFuture<Struct> handleExtension(ExtensionHeader header, ByteBuffer body) {
        return apis.handleExtension(header, body);
    }

    @Override
    public void onConnectionClosed(String connectionId) {
        apis.onConnectionClosed(connectionId);
    }

    /** Requested topics that may not be described are taken out and answered TOPIC_AUTHORIZATION_FAILED. */
    private CompletableFuture<AbstractResponse> metadata(Check check, RequestContext context,
                                                         MetadataRequest request) {
        List<String> refused = new ArrayList<>();
        if (request.data().topics() != null) {
            Iterator<MetadataRequestTopic> it = request.data().topics().iterator();
            while (it.hasNext()) {
                MetadataRequestTopic topic = it.next();
                String name = topic.name() != null ? topic.name() : name(topic.topicId());
                if (name == null || !check.allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, name)) {
                    refused.add(name == null ? "" : name);
                    it.remove();
                }
            }
        }
        return apis.handle(context, request).thenApply(response -> {
            MetadataResponse metadata = (MetadataResponse) response;
            metadata.data().topics().removeIf(t -> t.name() != null
                    && !check.allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, t.name()));
            for (String name : refused) {
                metadata.data().topics().add(new MetadataResponseTopic().setName(name)
                        .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
            }
            return metadata;
        });
    }

    private ApiException produce(Check check, ProduceRequest request) {
        String transactionalId = request.transactionalId();
        if (transactionalId != null) {
            ApiException denied = transactionalId(check, transactionalId);
            if (denied != null) {
                return denied;
            }
        }
        return topics(check, AclOperation.WRITE, request.data().topicData().stream()
                .map(t -> t.name() != null && !t.name().isEmpty() ? t.name() : name(t.topicId())).toList());
    }

    private static ApiException fetch(Check check, FetchRequest request) {
        return request.isFromFollower() ? cluster(check, AclOperation.CLUSTER_ACTION) : null;
    }

    /**
     * A consumer's Fetch naming a topic it may not READ: answered, with no fetch session, TOPIC_AUTHORIZATION_FAILED
     * for that topic's partitions and nothing (NONE, no records) for the others, which the consumer asks again;
     * null when every topic may be read.
     */
    private FetchResponse refusedFetch(Check check, FetchRequest request) {
        LinkedHashMap<TopicIdPartition, PartitionData> partitions = new LinkedHashMap<>();
        boolean refused = false;
        for (FetchTopic topic : request.data().topics()) {
            String name = topic.topic() != null && !topic.topic().isEmpty() ? topic.topic() : name(topic.topicId());
            boolean allowed = name != null && check.allowed(AclOperation.READ, ResourceType.TOPIC, name);
            refused |= !allowed;
            for (FetchPartition partition : topic.partitions()) {
                TopicIdPartition id = new TopicIdPartition(topic.topicId() == null ? Uuid.ZERO_UUID
                        : topic.topicId(), partition.partition(), name == null ? "" : name);
                partitions.put(id, FetchResponse.partitionResponse(id, allowed ? Errors.NONE
                        : Errors.TOPIC_AUTHORIZATION_FAILED));
            }
        }
        return refused ? FetchResponse.of(Errors.NONE, 0, FetchMetadata.INVALID_SESSION_ID, partitions, List.of())
                : null;
    }

    private ApiException findCoordinator(Check check, FindCoordinatorRequest request) {
        boolean transaction = request.data().keyType() == 1;
        List<String> keys = request.data().coordinatorKeys().isEmpty() ? List.of(request.data().key())
                : request.data().coordinatorKeys();
        for (String key : keys) {
            ApiException denied = transaction ? transactionalId(check, AclOperation.DESCRIBE, key)
                    : group(check, AclOperation.DESCRIBE, key);
            if (denied != null) {
                return denied;
            }
        }
        return null;
    }

    private ApiException addPartitions(Check check, AddPartitionsToTxnRequest request) {
        if (request.version() >= 4) {
            return cluster(check, AclOperation.CLUSTER_ACTION);
        }
        for (var entry : request.partitionsByTransaction().entrySet()) {
            ApiException denied = first(transactionalId(check, entry.getKey()), topics(check, AclOperation.WRITE,
                    entry.getValue().stream().map(tp -> tp.topic()).toList()));
            if (denied != null) {
                return denied;
            }
        }
        return null;
    }

    private List<String> names(List<Uuid> topicIds) {
        return topicIds.stream().map(id -> {
            String name = name(id);
            return name == null ? "" : name;
        }).toList();
    }

    private String name(Uuid topicId) {
        return topicId == null ? null : image.get().topic(topicId).map(t -> t.name()).orElse(null);
    }

    private static ApiException topics(Check check, AclOperation operation, List<String> names) {
        for (String name : names) {
            if (name != null && !check.allowed(operation, ResourceType.TOPIC, name)) {
                return new TopicAuthorizationException("Not authorized to " + operation + " topic " + name);
            }
        }
        return null;
    }

    private static ApiException group(Check check, AclOperation operation, String groupId) {
        return groupId == null || check.allowed(operation, ResourceType.GROUP, groupId) ? null
                : new GroupAuthorizationException("Not authorized to " + operation + " group " + groupId);
    }

    private static ApiException groups(Check check, AclOperation operation, List<String> groupIds) {
        for (String groupId : groupIds) {
            ApiException denied = group(check, operation, groupId);
            if (denied != null) {
                return denied;
            }
        }
        return null;
    }

    private static ApiException transactionalId(Check check, String transactionalId) {
        return transactionalId(check, AclOperation.WRITE, transactionalId);
    }

    private static ApiException transactionalId(Check check, AclOperation operation, String transactionalId) {
        return transactionalId == null || check.allowed(operation, ResourceType.TRANSACTIONAL_ID, transactionalId)
                ? null : new TransactionalIdAuthorizationException("Not authorized to " + operation
                + " transactional id " + transactionalId);
    }

    private static ApiException cluster(Check check, AclOperation operation) {
        return check.cluster(operation) ? null
                : new ClusterAuthorizationException("Not authorized to " + operation + " the cluster");
    }

    private static ApiException first(ApiException a, ApiException b) {
        return a != null ? a : b;
    }

    /** The authorizer bound to one request's principal and host. */
    private final class Check {
        private final RequestContext context;

        Check(RequestContext context) {
            this.context = context;
        }

        boolean allowed(AclOperation operation, ResourceType type, String name) {
            return authorizer.authorize(context.principal, context.clientAddress.getHostAddress(), operation, type,
                    name);
        }

        boolean cluster(AclOperation operation) {
            return allowed(operation, ResourceType.CLUSTER, CLUSTER);
        }
    }
}
