package dev.millrace.broker.controller;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * An immutable view of the cluster metadata at one applied quorum index.
 *
 * @param appliedIndex   the index of the last quorum log entry reflected here
 * @param topics         by name
 * @param nextProducerId the first producer id not yet allocated in a block; every id below it is
 *                       taken ({@link MetadataRecord.ProducerIdsRecord}); starts at 0
 * @param clusterId      the cluster's id ({@link MetadataRecord.ClusterIdRecord}), null until set
 * @param brokers        every registered broker by id, sorted by id; a broker stays registered (fenced
 *                       when it is gone) until it registers again
 * @param groupConfigs   the settings set on groups ({@link MetadataRecord.GroupConfigRecord}), by group id then
 *                       setting name, both sorted; a group with no setting is absent (defaults are not listed)
 * @param scramCredentials the users' salted SCRAM credentials ({@link MetadataRecord.UserScramCredentialRecord}), by
 *                       user then mechanism name ({@code SCRAM-SHA-256}), both sorted; a user with none is absent
 * @param acls           the ACL bindings ({@link MetadataRecord.AclRecord}), each once, in creation order
 * @param clientQuotas   the client quotas ({@link MetadataRecord.ClientQuotaRecord}) by entity (user, client id or
 *                       both; a null name is the default entity), then key to value; in the order the entities got
 *                       their first key; an entity with no key is absent
 */
public record MetadataImage(long appliedIndex, Map<String, TopicImage> topics, long nextProducerId,
                            String clusterId, Map<Integer, BrokerImage> brokers,
                            Map<String, Map<String, String>> groupConfigs,
                            Map<String, Map<String, ScramCredentialImage>> scramCredentials,
                            Set<AclBinding> acls, Map<ClientQuotaEntity, Map<String, Double>> clientQuotas) {

    public static final MetadataImage EMPTY = new MetadataImage(0, Map.of());

    /** An image with no client quota. */
    public MetadataImage(long appliedIndex, Map<String, TopicImage> topics, long nextProducerId,
                         String clusterId, Map<Integer, BrokerImage> brokers,
                         Map<String, Map<String, String>> groupConfigs,
                         Map<String, Map<String, ScramCredentialImage>> scramCredentials, Set<AclBinding> acls) {
        this(appliedIndex, topics, nextProducerId, clusterId, brokers, groupConfigs, scramCredentials, acls,
                Map.of());
    }

    /** An image with no ACL. */
    public MetadataImage(long appliedIndex, Map<String, TopicImage> topics, long nextProducerId,
                         String clusterId, Map<Integer, BrokerImage> brokers,
                         Map<String, Map<String, String>> groupConfigs,
                         Map<String, Map<String, ScramCredentialImage>> scramCredentials) {
        this(appliedIndex, topics, nextProducerId, clusterId, brokers, groupConfigs, scramCredentials, Set.of());
    }

    /** An image with no SCRAM credentials. */
    public MetadataImage(long appliedIndex, Map<String, TopicImage> topics, long nextProducerId,
                         String clusterId, Map<Integer, BrokerImage> brokers,
                         Map<String, Map<String, String>> groupConfigs) {
        this(appliedIndex, topics, nextProducerId, clusterId, brokers, groupConfigs, Map.of());
    }

    /** The SCRAM credential of {@code user} for {@code mechanism}, if one was created. */
    public Optional<ScramCredential> scramCredential(String user, ScramMechanism mechanism) {
        ScramCredentialImage credential = scramCredentials.getOrDefault(user, Map.of())
                .get(mechanism.mechanismName());
        return credential == null ? Optional.empty() : Optional.of(credential.toCredential());
    }

    /**
     * A salted SCRAM credential (RFC 5802): never the password.
     */
    public record ScramCredentialImage(byte[] salt, byte[] storedKey, byte[] serverKey, int iterations) {
        public ScramCredentialImage {
            salt = salt.clone();
            storedKey = storedKey.clone();
            serverKey = serverKey.clone();
        }

        ScramCredential toCredential() {
            return new ScramCredential(salt.clone(), storedKey.clone(), serverKey.clone(), iterations);
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
            return o instanceof ScramCredentialImage c && iterations == c.iterations
                    && java.util.Arrays.equals(salt, c.salt) && java.util.Arrays.equals(storedKey, c.storedKey)
                    && java.util.Arrays.equals(serverKey, c.serverKey);
        }

        @Override
        public int hashCode() {
            return java.util.Arrays.hashCode(salt) * 31 + iterations;
        }

        @Override
        public String toString() {
            return "ScramCredentialImage[iterations=" + iterations + "]";
        }
    }

    /** An image with no group settings. */
    public MetadataImage(long appliedIndex, Map<String, TopicImage> topics, long nextProducerId,
                         String clusterId, Map<Integer, BrokerImage> brokers) {
        this(appliedIndex, topics, nextProducerId, clusterId, brokers, Map.of());
    }

    /** An image with no cluster id and no registered broker. */
    public MetadataImage(long appliedIndex, Map<String, TopicImage> topics, long nextProducerId) {
        this(appliedIndex, topics, nextProducerId, null, Map.of());
    }

    /** An image in which no producer id has been allocated yet, with no cluster id and no broker. */
    public MetadataImage(long appliedIndex, Map<String, TopicImage> topics) {
        this(appliedIndex, topics, 0);
    }

    /** The settings set on group {@code groupId} (empty when it sets none). */
    public Map<String, String> groupConfigs(String groupId) {
        return groupConfigs.getOrDefault(groupId, Map.of());
    }

    public Optional<TopicImage> topic(String name) {
        return Optional.ofNullable(topics.get(name));
    }

    /** The topic with {@code topicId}, from an index built once per image ({@link TopicIdIndex}). */
    public Optional<TopicImage> topic(Uuid topicId) {
        return Optional.ofNullable(TopicIdIndex.of(this).get(topicId));
    }

    /** Whether broker {@code id} is registered and {@link BrokerState#UNFENCED}. */
    public boolean isUnfenced(int id) {
        BrokerImage broker = brokers.get(id);
        return broker != null && broker.state() == BrokerState.UNFENCED;
    }

    /** The ids of the unfenced brokers, ascending. */
    public List<Integer> unfencedBrokerIds() {
        return brokers.values().stream().filter(b -> b.state() == BrokerState.UNFENCED).map(BrokerImage::id)
                .sorted().toList();
    }

    /**
     * A topic.
     *
     * @param configs only the settings set for this topic (defaults are not listed)
     */
    public record TopicImage(String name, Uuid topicId, Map<Integer, PartitionImage> partitions,
                             Map<String, String> configs) {
    }

    /**
     * A partition's replica assignment and leadership. {@code leaderEpoch} grows with every leader
     * change; {@code partitionEpoch} with every change to the partition's record. During a
     * reassignment {@code replicas} is the target followed by {@code removingReplicas}, and
     * {@code addingReplicas} are the target replicas that are new; both are empty otherwise.
     */
    public record PartitionImage(int partition, List<Integer> replicas, List<Integer> isr, int leader,
                                 int leaderEpoch, int partitionEpoch, List<Integer> addingReplicas,
                                 List<Integer> removingReplicas) {

        public PartitionImage {
            replicas = List.copyOf(replicas);
            isr = List.copyOf(isr);
            addingReplicas = List.copyOf(addingReplicas);
            removingReplicas = List.copyOf(removingReplicas);
        }

        /** A partition with no reassignment in progress. */
        public PartitionImage(int partition, List<Integer> replicas, List<Integer> isr, int leader, int leaderEpoch,
                              int partitionEpoch) {
            this(partition, replicas, isr, leader, leaderEpoch, partitionEpoch, List.of(), List.of());
        }

        /** Whether a reassignment is in progress. */
        public boolean isReassigning() {
            return !addingReplicas.isEmpty() || !removingReplicas.isEmpty();
        }

        /** The replicas the partition will have once its reassignment completes (its replicas when none runs). */
        public List<Integer> targetReplicas() {
            return replicas.stream().filter(r -> !removingReplicas.contains(r)).toList();
        }
    }

    /**
     * A registered broker.
     *
     * @param epoch     the broker epoch of this registration; grows with every registration of the cluster
     * @param host      the inter-broker listener's advertised host (with {@code port}: where other nodes connect)
     * @param rack      the broker's rack, or null
     * @param listeners every listener's advertised endpoint by name, for clients; empty for a broker that registered
     *                  only {@code host}:{@code port}
     */
    public record BrokerImage(int id, Uuid incarnationId, long epoch, String host, int port, String rack,
                              BrokerState state, Map<String, ListenerEndpoint> listeners) {
        public BrokerImage {
            listeners = ListenerEndpoint.sorted(listeners);
        }

        /** A broker with one listener. */
        public BrokerImage(int id, Uuid incarnationId, long epoch, String host, int port, String rack,
                           BrokerState state) {
            this(id, incarnationId, epoch, host, port, rack, state, Map.of());
        }

        /** Where the clients of listener {@code name} reach this broker: that listener, else host:port. */
        public ListenerEndpoint endpoint(String name) {
            ListenerEndpoint endpoint = name == null ? null : listeners.get(name);
            return endpoint != null ? endpoint : new ListenerEndpoint(host, port);
        }
    }
}
