package dev.millrace.broker.controller;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;

import dev.millrace.broker.controller.MetadataImage.PartitionImage;

/**
 * The cluster metadata service: topics, partitions (replicas, leader, leader epoch, ISR), topic
 * configs and producer-id blocks, kept as a replicated state machine. Each call validates on the
 * leader, commits records through the quorum and completes once they are applied; {@link #image()}
 * then reflects them.
 *
 * <p>Results are per entity ({@link ApiError} with Kafka's error code and a message that says what
 * was wrong), never one error for a whole batch; requests without entities (and failures of a whole
 * request, such as NOT_CONTROLLER or a stale broker epoch) fail their future with the kafka-clients
 * {@link org.apache.kafka.common.errors.ApiException} of the error. Thread-safe.
 */
public interface Controller extends AutoCloseable {

    /** Starts the quorum member and waits until this node can serve (leader elected, log replayed). */
    void start() throws Exception;

    /** The latest applied metadata; immutable. */
    MetadataImage image();

    /** Called on the applying thread after every change to the image, in order. */
    void registerListener(MetadataListener listener);

    /**
     * Creates topics. A partition count or replication factor of -1 takes the broker default.
     *
     * @return per topic name: NONE, TOPIC_ALREADY_EXISTS, INVALID_TOPIC_EXCEPTION, INVALID_PARTITIONS,
     *         INVALID_REPLICATION_FACTOR, INVALID_CONFIG, ...
     */
    CompletableFuture<Map<String, ApiError>> createTopics(List<NewTopic> topics, boolean validateOnly);

    /** @return per topic name: NONE or UNKNOWN_TOPIC_OR_PARTITION, ... */
    CompletableFuture<Map<String, ApiError>> deleteTopics(Collection<String> names);

    /** Grows topics to the given total partition counts; @return per topic name. */
    CompletableFuture<Map<String, ApiError>> createPartitions(Map<String, Integer> totalCounts, boolean validateOnly);

    /**
     * Changes topic configs: {@code set} entries are set, {@code delete} names return to the default.
     * With {@code replace} every setting not in {@code set} returns to its default (legacy AlterConfigs).
     *
     * @return per topic name: NONE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_CONFIG (naming the setting)
     */
    CompletableFuture<Map<String, ApiError>> alterTopicConfigs(Map<String, TopicConfigChange> changes,
                                                               boolean validateOnly);

    /**
     * Changes group settings (Kafka's {@code GROUP} config resource): {@code set} entries are set, {@code delete}
     * names return to the default, validated as a whole by the broker's {@link GroupConfigPolicy}. Committed to the
     * metadata log, so every broker applies them from its image and they survive restarts.
     *
     * @return per group id: NONE, INVALID_CONFIG (naming the setting and value), INVALID_GROUP_ID
     */
    CompletableFuture<Map<String, ApiError>> alterGroupConfigs(Map<String, GroupConfigChange> changes,
                                                               boolean validateOnly);

    /**
     * Creates, replaces and deletes users' SCRAM credentials (Kafka's AlterUserScramCredentials; the upsertions carry
     * salted passwords, see {@link ScramControlManager}), committed to the metadata log as
     * {@link MetadataRecord.UserScramCredentialRecord}s so every broker authenticates with them.
     *
     * @return per user: NONE, UNACCEPTABLE_CREDENTIAL, UNSUPPORTED_SASL_MECHANISM, DUPLICATE_RESOURCE,
     *         RESOURCE_NOT_FOUND
     */
    default CompletableFuture<Map<String, ApiError>> alterUserScramCredentials(
            org.apache.kafka.common.message.AlterUserScramCredentialsRequestData request) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("SCRAM credentials"));
    }

    /**
     * Creates ACL bindings (Kafka's CreateAcls, checked by {@link AclControlManager}), committed to the metadata log
     * as {@link MetadataRecord.AclRecord}s so every broker's authorizer sees them.
     *
     * @return per creation, in order: NONE or INVALID_REQUEST naming the problem
     */
    default CompletableFuture<List<ApiError>> createAcls(List<org.apache.kafka.common.acl.AclBinding> creations) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("ACLs"));
    }

    /**
     * Deletes the ACL bindings that match each filter (Kafka's DeleteAcls), committed as
     * {@link MetadataRecord.RemoveAclRecord}s.
     *
     * @return per filter, in order: the bindings it removed, or its error
     */
    default CompletableFuture<List<AclDeletion>> deleteAcls(
            List<org.apache.kafka.common.acl.AclBindingFilter> filters) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("ACLs"));
    }

    /**
     * Sets and removes client quotas (Kafka's AlterClientQuotas, checked by {@link ClientQuotaControlManager}),
     * committed to the metadata log as {@link MetadataRecord.ClientQuotaRecord}s so every broker enforces them.
     *
     * @return per entry, in order: NONE or INVALID_REQUEST naming the entity type, key or value at fault
     */
    default CompletableFuture<List<ApiError>> alterClientQuotas(
            List<org.apache.kafka.common.message.AlterClientQuotasRequestData.EntryData> entries,
            boolean validateOnly) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("client quotas"));
    }

    /** The bindings one DeleteAcls filter removed (NONE), or the error that filter got (none removed). */
    record AclDeletion(ApiError error, List<org.apache.kafka.common.acl.AclBinding> deleted) {
    }

    /**
     * Allocates the next block of {@link ProducerIdBlock#BLOCK_SIZE} consecutive producer ids to a
     * broker (Kafka's AllocateProducerIds). No id is ever in two blocks, also across restarts and
     * leader changes. The future fails with
     * {@link org.apache.kafka.common.errors.NotControllerException} when this node is not the active
     * controller, or with another {@link org.apache.kafka.common.errors.ApiException}.
     */
    CompletableFuture<ProducerIdBlock> allocateProducerIds(int brokerId);

    /** The node id of the active controller (the raft leader), if one is known. */
    Optional<Integer> activeControllerId();

    /**
     * Registers a broker (a new incarnation replaces the previous one); the registration starts
     * {@link BrokerState#FENCED}. The same incarnation registering again gets its epoch back.
     *
     * @return the broker epoch, which grows with every registration of the cluster; fails with
     *         {@link org.apache.kafka.common.errors.InconsistentClusterIdException} for another cluster id,
     *         {@link org.apache.kafka.common.errors.DuplicateBrokerRegistrationException} when another
     *         incarnation of the id is still alive
     */
    CompletableFuture<Long> registerBroker(BrokerRegistration registration);

    /**
     * A broker's heartbeat: keeps its session alive, unfences it once it has caught up with its
     * registration, fences it or runs its controlled shutdown when it asks. Fails with
     * {@link org.apache.kafka.common.errors.StaleBrokerEpochException} for an unknown broker or epoch.
     */
    CompletableFuture<BrokerHeartbeatReply> brokerHeartbeat(BrokerHeartbeat heartbeat);

    /**
     * A hint that broker {@code brokerId} may be dead: its connection to this node closed (a process killed on a
     * machine that stays up closes its sockets at once). If this node is the active controller, the broker's session
     * now ends within the configured grace (two heartbeat intervals by default) unless it heartbeats again, so a
     * dead broker is fenced in about a second instead of a whole session timeout; a live broker that lost its
     * connection reconnects and heartbeats well within the grace. Ignored elsewhere.
     */
    default void brokerUnreachable(int brokerId) {
    }

    /**
     * ISR changes asked for by a partition leader (Kafka's AlterPartition). Per partition: NONE with the
     * committed state, or UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH,
     * INVALID_UPDATE_VERSION (with the current state to catch up with), INELIGIBLE_REPLICA. Fails with
     * {@link org.apache.kafka.common.errors.StaleBrokerEpochException} for a stale broker epoch.
     * The keys carry the topic's name when the topic exists, else null.
     */
    CompletableFuture<Map<TopicIdPartition, AlterPartitionResult>> alterPartition(int brokerId, long brokerEpoch,
                                                                                  List<IsrChange> changes);

    /**
     * Preferred ({@code preferred}) or unclean leader election.
     *
     * @param partitions null for every partition
     * @return per partition: NONE, ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
     *         ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION
     */
    CompletableFuture<Map<TopicPartition, ApiError>> electLeaders(boolean preferred, Set<TopicPartition> partitions);

    /**
     * Moves partitions to target replicas ({@link Optional#empty()} cancels a reassignment in progress),
     * Kafka's AlterPartitionReassignments: the new replicas are added, and the old ones leave once every
     * target replica is in the ISR (the leaders' ISR changes complete it).
     *
     * @return per partition: NONE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT (naming an
     *         unregistered broker), NO_REASSIGNMENT_IN_PROGRESS
     */
    CompletableFuture<Map<TopicPartition, ApiError>> alterPartitionReassignments(
            Map<TopicPartition, Optional<List<Integer>>> reassignments);

    /** The partitions with a reassignment in progress. */
    CompletableFuture<Map<TopicPartition, OngoingReassignment>> listPartitionReassignments();

    /** A reassignment in progress: the replicas (target, then removing), the adding and the removing ones. */
    record OngoingReassignment(List<Integer> replicas, List<Integer> addingReplicas, List<Integer> removingReplicas) {
    }

    /**
     * A broker registering.
     *
     * @param host      the inter-broker listener's advertised host (other nodes connect there)
     * @param rack      the broker's rack, or null
     * @param listeners every listener's advertised endpoint by listener name, for clients; empty when the broker has
     *                  only the one listener of {@code host}:{@code port}
     */
    record BrokerRegistration(int brokerId, String clusterId, Uuid incarnationId, String host, int port,
                              String rack, Map<String, ListenerEndpoint> listeners) {
        public BrokerRegistration {
            listeners = ListenerEndpoint.sorted(listeners);
        }

        /** A broker with one listener. */
        public BrokerRegistration(int brokerId, String clusterId, Uuid incarnationId, String host, int port,
                                  String rack) {
            this(brokerId, clusterId, incarnationId, host, port, rack, Map.of());
        }
    }

    /**
     * A broker's heartbeat.
     *
     * @param appliedMetadataIndex the highest metadata index ({@link MetadataImage#appliedIndex()}) the
     *                             broker has applied
     * @param wantFence            the broker asks to be fenced (it cannot serve)
     * @param wantShutdown         the broker asks for a controlled shutdown
     */
    record BrokerHeartbeat(int brokerId, long brokerEpoch, long appliedMetadataIndex, boolean wantFence,
                           boolean wantShutdown) {
    }

    /**
     * @param caughtUp       the broker has applied the metadata up to its registration
     * @param fenced         the broker is not unfenced (fenced or in controlled shutdown) after this heartbeat
     * @param shouldShutdown the controlled shutdown is done: the broker leads nothing another ISR member
     *                       could lead
     */
    record BrokerHeartbeatReply(boolean caughtUp, boolean fenced, boolean shouldShutdown) {
    }

    /** One partition's ISR change, with the leader and partition epochs the leader knows. */
    record IsrChange(Uuid topicId, int partition, int leaderEpoch, List<Integer> newIsr, int partitionEpoch) {
    }

    /**
     * @param partition the committed state when NONE, the current state when the caller must catch up,
     *                  or null for an unknown partition
     */
    record AlterPartitionResult(Errors error, PartitionImage partition) {
    }

    /**
     * A topic to create.
     *
     * @param assignments the replicas of each partition, chosen by the client (partition 0, 1, ... to its broker ids,
     *                    the first the preferred leader); empty to let the controller place them. With assignments,
     *                    {@code numPartitions} and {@code replicationFactor} must be -1, as in Kafka's CreateTopics
     */
    record NewTopic(String name, int numPartitions, short replicationFactor, Map<String, String> configs,
                    Map<Integer, List<Integer>> assignments) {

        public NewTopic {
            assignments = Map.copyOf(assignments);
        }

        /** A topic whose replicas the controller places. */
        public NewTopic(String name, int numPartitions, short replicationFactor, Map<String, String> configs) {
            this(name, numPartitions, replicationFactor, configs, Map.of());
        }
    }

    /** Config changes for one topic. */
    record TopicConfigChange(Map<String, String> set, Collection<String> delete, boolean replace) {
    }

    /** Config changes for one group: settings to set, names to return to the default. */
    record GroupConfigChange(Map<String, String> set, Collection<String> delete) {
    }
}
