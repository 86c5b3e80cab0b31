package dev.millrace.broker.controller;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * One change to the cluster metadata, as committed through the quorum. Records are computed by the
 * active controller and replayed, in log order, by every voter ({@link MetadataImageBuilder#replay});
 * replaying the same records always yields the same image. The binary form is in
 * {@link MetadataRecordSerde}.
 *
 * <p>All implementations are immutable value types and thread-safe.
 */
public sealed interface MetadataRecord {

    /** A topic comes into existence with no partitions and no configs; its partitions follow. */
    record TopicRecord(String name, Uuid topicId) implements MetadataRecord {
        public TopicRecord {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(topicId, "topicId");
        }
    }

    /**
     * The whole state of one partition: a new partition, or a replacement of an existing one (leader
     * and ISR changes, reassignment steps), raising the epochs.
     *
     * <p>During a reassignment {@code replicas} holds the target replicas followed by the ones being
     * removed; {@code addingReplicas} are target replicas not yet in the ISR-complete set,
     * {@code removingReplicas} the old replicas that leave when it completes (Kafka's model). Both are
     * empty when no reassignment is in progress; the record is then written at version 0, else at
     * version 1 (see {@link MetadataRecordSerde}).
     *
     * @param leader the broker id of the leader, or -1 when the partition has none
     */
    record PartitionRecord(Uuid topicId, int partition, List<Integer> replicas, List<Integer> isr, int leader,
                           int leaderEpoch, int partitionEpoch, List<Integer> addingReplicas,
                           List<Integer> removingReplicas) implements MetadataRecord {
        public PartitionRecord {
            Objects.requireNonNull(topicId, "topicId");
            replicas = List.copyOf(replicas);
            isr = List.copyOf(isr);
            addingReplicas = List.copyOf(addingReplicas);
            removingReplicas = List.copyOf(removingReplicas);
        }

        /** A partition with no reassignment in progress. */
        public PartitionRecord(Uuid topicId, int partition, List<Integer> replicas, List<Integer> isr, int leader,
                               int leaderEpoch, int partitionEpoch) {
            this(topicId, partition, replicas, isr, leader, leaderEpoch, partitionEpoch, List.of(), List.of());
        }
    }

    /** A topic, its partitions and its configs are gone. */
    record RemoveTopicRecord(Uuid topicId) implements MetadataRecord {
        public RemoveTopicRecord {
            Objects.requireNonNull(topicId, "topicId");
        }
    }

    /**
     * One topic config setting is set, or with a {@code null} value returns to its default.
     *
     * @param topic the topic's name
     */
    record ConfigRecord(String topic, String name, String value) implements MetadataRecord {
        public ConfigRecord {
            Objects.requireNonNull(topic, "topic");
            Objects.requireNonNull(name, "name");
        }
    }

    /**
     * One setting of a group (Kafka's {@code GROUP} config resource; today the share-group settings of
     * {@code dev.millrace.broker.share.ShareGroupConfigs}) is set, or with a {@code null} value returns to its
     * default. A group needs no other record to exist: settings may be made before the group has members, and
     * outlive its deletion. Validated by the active controller's {@link GroupConfigPolicy} before it is written.
     *
     * <pre>
     * body in {@link MetadataRecordSerde} (type 9, version 0):
     *   +-----------------+--------------+------------------------+
     *   | groupId (string)| name (string)| value (nullable string)|
     *   +-----------------+--------------+------------------------+
     * </pre>
     */
    record GroupConfigRecord(String groupId, String name, String value) implements MetadataRecord {
        public GroupConfigRecord {
            Objects.requireNonNull(groupId, "groupId");
            Objects.requireNonNull(name, "name");
        }
    }

    /**
     * A producer-id block was allocated to a broker: every id below {@code nextProducerId} is taken
     * and is never handed out again. Replay only ever moves the image's next producer id forwards
     * ({@link MetadataImage#nextProducerId()}). A snapshot writes one such record, with broker id -1,
     * to carry the next producer id.
     *
     * <pre>
     *   ids:  0 ........................ nextProducerId - 1 | nextProducerId ........
     *         +-----------------------------------------------+----------------------
     *         | taken (handed out in blocks, never again)     | free
     *         +-----------------------------------------------+----------------------
     *
     * body in {@link MetadataRecordSerde} (type 5, version 0, 12 bytes, big-endian):
     *   +------------------+------------------------+
     *   | brokerId (int32) | nextProducerId (int64) |
     *   +------------------+------------------------+
     * </pre>
     *
     * @param brokerId       the broker the block went to, or -1 in a snapshot
     * @param nextProducerId the first id that is still free (the allocated block ends just below it)
     */
    record ProducerIdsRecord(int brokerId, long nextProducerId) implements MetadataRecord {
    }

    /**
     * The cluster's id. Set once, by the first active controller that has one configured
     * ({@link ControllerConfig#initialClusterId()}); brokers registering with another id are refused.
     *
     * <pre>
     * body in {@link MetadataRecordSerde} (type 6, version 0):
     *   +--------------------------+
     *   | clusterId (string)       |
     *   +--------------------------+
     * </pre>
     */
    record ClusterIdRecord(String clusterId) implements MetadataRecord {
        public ClusterIdRecord {
            Objects.requireNonNull(clusterId, "clusterId");
        }
    }

    /**
     * A broker registered (or registered again, as a new incarnation). The registration starts
     * {@link BrokerState#FENCED}; it replaces any earlier registration of the same broker id. The
     * broker epoch is chosen by the active controller so that it grows with every registration of
     * the cluster, across controller failover (see {@link ClusterControlManager}).
     *
     * <pre>
     * body in {@link MetadataRecordSerde} (type 7, version 0):
     *   +------------------+-----------------------+--------------------+---------------+--------------+------------------------+
     *   | brokerId (int32) | incarnationId (uuid)  | brokerEpoch (int64)| host (string) | port (int32) | rack (nullable string) |
     *   +------------------+-----------------------+--------------------+---------------+--------------+------------------------+
     * version 1 (written when the broker registers its listeners) appends, sorted by name:
     *   +-----------------+--------------------------------------------------------+
     *   | count (int32)   | count x ( name (string) | host (string) | port (int32) ) |
     *   +-----------------+--------------------------------------------------------+
     * </pre>
     *
     * @param host      the inter-broker listener's advertised host
     * @param rack      the broker's rack ({@code broker.rack}), or null
     * @param listeners every listener's advertised endpoint by name ({@link ListenerEndpoint}); empty at version 0
     */
    record BrokerRegistrationRecord(int brokerId, Uuid incarnationId, long brokerEpoch, String host, int port,
                                    String rack, Map<String, ListenerEndpoint> listeners) implements MetadataRecord {
        public BrokerRegistrationRecord {
            Objects.requireNonNull(incarnationId, "incarnationId");
            Objects.requireNonNull(host, "host");
            listeners = ListenerEndpoint.sorted(listeners);
        }

        /** A registration without listeners (version 0). */
        public BrokerRegistrationRecord(int brokerId, Uuid incarnationId, long brokerEpoch, String host, int port,
                                        String rack) {
            this(brokerId, incarnationId, brokerEpoch, host, port, rack, Map.of());
        }
    }

    /**
     * A registered broker changes state. Replay refuses a record whose epoch is not the broker's
     * current registration's epoch (a stale record means the leader computed it against an image it
     * did not have, which a correct controller never does).
     *
     * <pre>
     * body in {@link MetadataRecordSerde} (type 8, version 0, 13 bytes):
     *   +------------------+---------------------+--------------+
     *   | brokerId (int32) | brokerEpoch (int64) | state (int8) |
     *   +------------------+---------------------+--------------+
     *   state: 0 FENCED, 1 UNFENCED, 2 CONTROLLED_SHUTDOWN
     * </pre>
     */
    record BrokerStateRecord(int brokerId, long brokerEpoch, BrokerState state) implements MetadataRecord {
        public BrokerStateRecord {
            Objects.requireNonNull(state, "state");
        }
    }

    /**
     * A user's SCRAM credential for one mechanism is created or replaced (Admin {@code alterUserScramCredentials}).
     * Only the salted form is kept, as RFC 5802 defines it: from the client's salted password the controller derives
     * {@code storedKey = H(HMAC(saltedPassword, "Client Key"))} and {@code serverKey = HMAC(saltedPassword,
     * "Server Key")} (kafka-clients' {@code ScramFormatter}); neither the password nor the salted password is stored.
     *
     * <pre>
     * body in {@link MetadataRecordSerde} (type 10, version 0):
     *   +--------------+------------------+---------------+--------------------+--------------------+-------------------+
     *   | user (string)| mechanism (int8) | salt (bytes)  | storedKey (bytes)  | serverKey (bytes)  | iterations (int32)|
     *   +--------------+------------------+---------------+--------------------+--------------------+-------------------+
     *   mechanism: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512 (Kafka's ScramMechanism type)
     *   bytes: int32 length, then that many bytes
     * </pre>
     */
    record UserScramCredentialRecord(String user, byte mechanism, byte[] salt, byte[] storedKey, byte[] serverKey,
                                     int iterations) implements MetadataRecord {
        public UserScramCredentialRecord {
            Objects.requireNonNull(user, "user");
            salt = salt.clone();
            storedKey = storedKey.clone();
            serverKey = serverKey.clone();
        }

        @Override
        public byte[] salt() {
            return salt.clone();
        }

        @Override
        public byte[] storedKey() {
            return storedKey.clone();
        }

        @Override
        public byte[] serverKey() {
            return serverKey.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof UserScramCredentialRecord r && user.equals(r.user) && mechanism == r.mechanism
                    && iterations == r.iterations && java.util.Arrays.equals(salt, r.salt)
                    && java.util.Arrays.equals(storedKey, r.storedKey) && java.util.Arrays.equals(serverKey, r.serverKey);
        }

        @Override
        public int hashCode() {
            return Objects.hash(user, mechanism, iterations, java.util.Arrays.hashCode(salt));
        }

        @Override
        public String toString() {
            return "UserScramCredentialRecord[user=" + user + ", mechanism=" + mechanism + ", iterations="
                    + iterations + "]";
        }
    }

    /**
     * A user's SCRAM credential for one mechanism is deleted.
     *
     * <pre>
     * body in {@link MetadataRecordSerde} (type 11, version 0):
     *   +--------------+------------------+
     *   | user (string)| mechanism (int8) |
     *   +--------------+------------------+
     * </pre>
     */
    record RemoveUserScramCredentialRecord(String user, byte mechanism) implements MetadataRecord {
        public RemoveUserScramCredentialRecord {
            Objects.requireNonNull(user, "user");
        }
    }
    /**
     * An ACL binding is created (Admin {@code createAcls}): who ({@code principal}, {@code User:name} or
     * {@code User:*}) may or may not ({@code permission}) do {@code operation} from {@code host} ({@code *}: any) on
     * the resources the pattern names. Bytes are Kafka's codes ({@code ResourceType}, {@code PatternType},
     * {@code AclOperation}, {@code AclPermissionType}), so the binding converts to kafka-clients' {@link AclBinding}.
     * Creating a binding that exists changes nothing.
     *
     * <pre>
     * body in {@link MetadataRecordSerde} (type 12 ACL, type 13 REMOVE_ACL, version 0, same layout):
     *   +---------------------+-----------------------+--------------------+------------------+
     *   | resourceType (int8) | resourceName (string) | patternType (int8) | principal (string)|
     *   +---------------------+-----------------------+--------------------+------------------+
     *   +---------------+------------------+-------------------+
     *   | host (string) | operation (int8) | permission (int8) |
     *   +---------------+------------------+-------------------+
     *   resourceType: 2 TOPIC, 3 GROUP, 4 CLUSTER, 5 TRANSACTIONAL_ID ...; patternType: 3 LITERAL, 4 PREFIXED;
     *   operation: 2 ALL, 3 READ, 4 WRITE, 5 CREATE, 6 DELETE, 7 ALTER, 8 DESCRIBE, ...; permission: 2 DENY, 3 ALLOW
     * </pre>
     */
    record AclRecord(byte resourceType, String resourceName, byte patternType, String principal, String host,
                     byte operation, byte permission) implements MetadataRecord {
        public AclRecord {
            Objects.requireNonNull(resourceName, "resourceName");
            Objects.requireNonNull(principal, "principal");
            Objects.requireNonNull(host, "host");
        }

        static AclRecord of(AclBinding binding) {
            return new AclRecord(binding.pattern().resourceType().code(), binding.pattern().name(),
                    binding.pattern().patternType().code(), binding.entry().principal(), binding.entry().host(),
                    binding.entry().operation().code(), binding.entry().permissionType().code());
        }

        AclBinding toBinding() {
            return new AclBinding(new ResourcePattern(ResourceType.fromCode(resourceType), resourceName,
                    PatternType.fromCode(patternType)), new AccessControlEntry(principal, host,
                    AclOperation.fromCode(operation), AclPermissionType.fromCode(permission)));
        }
    }

    /** An ACL binding is deleted (Admin {@code deleteAcls}); the body is that of {@link AclRecord}. */
    record RemoveAclRecord(AclRecord acl) implements MetadataRecord {
        public RemoveAclRecord {
            Objects.requireNonNull(acl, "acl");
        }
    }

    /**
     * A client quota is set or removed (Admin {@code alterClientQuotas}) for one quota entity: a user, a client id,
     * or a user and client id, each either named or the default ({@code <default>}, a null name) of its type. Keys
     * are Kafka's: {@code producer_byte_rate}, {@code consumer_byte_rate} (bytes per second),
     * {@code request_percentage} (percent of one request thread). Replaying a removal of a key the entity does not
     * have changes nothing; an entity left with no key disappears from the image.
     *
     * <pre>
     * body in {@link MetadataRecordSerde} (type 14, version 0):
     *   +---------------+-------------------------------------------------------+
     *   | count (int32) | count x ( entityType (string) | entityName (nullable string) ) |
     *   +---------------+-------------------------------------------------------+
     *   +--------------+---------------+-----------------+
     *   | key (string) | remove (int8) | value (float64) |
     *   +--------------+---------------+-----------------+
     *   entityType: "user" or "client-id", each at most once, sorted; entityName null: the default entity
     *   remove: 1 the key is removed (value is 0 and ignored), 0 the key is set to value (&gt; 0)
     * </pre>
     *
     * @param entity the entity's parts, entity type to name (null for the default), sorted by type
     */
    record ClientQuotaRecord(Map<String, String> entity, String key, double value, boolean remove)
            implements MetadataRecord {
        public ClientQuotaRecord {
            Objects.requireNonNull(key, "key");
            entity = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(entity));
        }

        /** Sets {@code key} of {@code entity} to {@code value}. */
        static ClientQuotaRecord set(Map<String, String> entity, String key, double value) {
            return new ClientQuotaRecord(entity, key, value, false);
        }

        /** Removes {@code key} from {@code entity}. */
        static ClientQuotaRecord remove(Map<String, String> entity, String key) {
            return new ClientQuotaRecord(entity, key, 0, true);
        }
    }
}
