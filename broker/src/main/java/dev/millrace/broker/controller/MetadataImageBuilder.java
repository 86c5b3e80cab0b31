package dev.millrace.broker.controller;

import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.quota.ClientQuotaEntity;

import org.apache.kafka.common.security.scram.internals.ScramMechanism;

import dev.millrace.broker.controller.MetadataImage.BrokerImage;
import dev.millrace.broker.controller.MetadataImage.ScramCredentialImage;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;
import dev.millrace.broker.controller.MetadataRecord.BrokerRegistrationRecord;
import dev.millrace.broker.controller.MetadataRecord.BrokerStateRecord;
import dev.millrace.broker.controller.MetadataRecord.ClusterIdRecord;
import dev.millrace.broker.controller.MetadataRecord.ConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.GroupConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.PartitionRecord;
import dev.millrace.broker.controller.MetadataRecord.ProducerIdsRecord;
import dev.millrace.broker.controller.MetadataRecord.RemoveTopicRecord;
import dev.millrace.broker.controller.MetadataRecord.RemoveUserScramCredentialRecord;
import dev.millrace.broker.controller.MetadataRecord.AclRecord;
import dev.millrace.broker.controller.MetadataRecord.ClientQuotaRecord;
import dev.millrace.broker.controller.MetadataRecord.RemoveAclRecord;
import dev.millrace.broker.controller.MetadataRecord.UserScramCredentialRecord;
import dev.millrace.broker.controller.MetadataRecord.TopicRecord;

/**
 * Replays committed records on top of one image and builds the next. This is the only place where
 * metadata state changes; the leader's control managers only compute records.
 *
 * <p>Replay is deterministic and checks the invariants a correct leader never breaks (a topic name
 * or id is unique, partitions and configs belong to an existing topic, the next producer id only
 * grows so that no producer id is handed out twice, the cluster id is set once, a broker's
 * registration epoch only grows, a broker state change names the broker's current epoch, partition
 * leaders are -1 or a member of the ISR, which is a subset of the replicas). A record that breaks one
 * throws {@link IllegalStateException} naming the record and the state it met; the state machine
 * then stops applying ({@code setErrorAndRollback}) rather than diverge or skip the record.
 *
 * <p>Topics untouched by the replayed records are shared with the base image, so listeners may
 * compare {@link TopicImage}s by identity to find what changed. The built image's maps are sorted
 * (topics by name, partitions by number) and unmodifiable.
 *
 * <p>Not thread-safe: one builder per applied batch, used by the applying thread only.
 */
final class MetadataImageBuilder {

    private final Map<String, TopicImage> topics;
    private final Map<Uuid, String> namesById = new HashMap<>();
    private final Map<String, TopicChange> changed = new HashMap<>();
    private final Map<Integer, BrokerImage> brokers;
    /** Every group's settings; a group's map is copied before its first change in this batch. */
    private final Map<String, Map<String, String>> groupConfigs;
    private final Set<String> changedGroups = new HashSet<>();
    /** Every user's SCRAM credentials; a user's map is copied before its first change in this batch. */
    private final Map<String, Map<String, ScramCredentialImage>> scramCredentials;
    private final Set<String> changedUsers = new HashSet<>();
    private final Set<AclBinding> acls;
    /** Every entity's quotas; an entity's map is copied before its first change in this batch. */
    private final Map<ClientQuotaEntity, Map<String, Double>> clientQuotas;
    private final Set<ClientQuotaEntity> changedQuotaEntities = new HashSet<>();
    private long nextProducerId;
    private String clusterId;

    MetadataImageBuilder(MetadataImage base) {
        this.nextProducerId = base.nextProducerId();
        this.clusterId = base.clusterId();
        this.brokers = new TreeMap<>(base.brokers());
        this.groupConfigs = new TreeMap<>(base.groupConfigs());
        this.scramCredentials = new TreeMap<>(base.scramCredentials());
        this.acls = new LinkedHashSet<>(base.acls());
        this.clientQuotas = new java.util.LinkedHashMap<>(base.clientQuotas());
        this.topics = new HashMap<>(base.topics());
        for (TopicImage topic : base.topics().values()) {
            namesById.put(topic.topicId(), topic.name());
        }
    }

    void replay(MetadataRecord record) {
        if (record instanceof TopicRecord r) {
            replay(r);
        } else if (record instanceof PartitionRecord r) {
            replay(r);
        } else if (record instanceof RemoveTopicRecord r) {
            replay(r);
        } else if (record instanceof ConfigRecord r) {
            replay(r);
        } else if (record instanceof ProducerIdsRecord r) {
            replay(r);
        } else if (record instanceof ClusterIdRecord r) {
            replay(r);
        } else if (record instanceof BrokerRegistrationRecord r) {
            replay(r);
        } else if (record instanceof BrokerStateRecord r) {
            replay(r);
        } else if (record instanceof GroupConfigRecord r) {
            replay(r);
        } else if (record instanceof UserScramCredentialRecord r) {
            replay(r);
        } else if (record instanceof RemoveUserScramCredentialRecord r) {
            replay(r);
        } else if (record instanceof AclRecord r) {
            acls.add(r.toBinding());
        } else if (record instanceof RemoveAclRecord r) {
            acls.remove(r.acl().toBinding());
        } else if (record instanceof ClientQuotaRecord r) {
            replay(r);
        } else {
            throw new IllegalStateException("No replay for metadata record " + record);
        }
    }

    MetadataImage build(long appliedIndex) {
        for (TopicChange change : changed.values()) {
            topics.put(change.name, change.toImage());
        }
        changed.clear();
        for (String groupId : changedGroups) {
            Map<String, String> settings = groupConfigs.get(groupId);
            if (settings != null) {
                groupConfigs.put(groupId, Collections.unmodifiableMap(settings));
            }
        }
        changedGroups.clear();
        for (String user : changedUsers) {
            Map<String, ScramCredentialImage> credentials = scramCredentials.get(user);
            if (credentials != null) {
                scramCredentials.put(user, Collections.unmodifiableMap(credentials));
            }
        }
        changedUsers.clear();
        for (ClientQuotaEntity entity : changedQuotaEntities) {
            Map<String, Double> quotas = clientQuotas.get(entity);
            if (quotas != null) {
                clientQuotas.put(entity, Collections.unmodifiableMap(quotas));
            }
        }
        changedQuotaEntities.clear();
        return new MetadataImage(appliedIndex, Collections.unmodifiableMap(new TreeMap<>(topics)), nextProducerId,
                clusterId, Collections.unmodifiableMap(new TreeMap<>(brokers)),
                Collections.unmodifiableMap(new TreeMap<>(groupConfigs)),
                Collections.unmodifiableMap(new TreeMap<>(scramCredentials)),
                Collections.unmodifiableSet(new LinkedHashSet<>(acls)),
                Collections.unmodifiableMap(new java.util.LinkedHashMap<>(clientQuotas)));
    }

    /**
     * A quota key of an entity is set or removed; an entity left with no key disappears from the image. The entity
     * names one or both of {@code user} and {@code client-id}, and a set value is positive and finite (what the
     * controller's checks let through).
     */
    private void replay(ClientQuotaRecord record) {
        Map<String, String> parts = record.entity();
        if (parts.isEmpty() || !parts.keySet().stream().allMatch(t -> t.equals(ClientQuotaEntity.USER)
                || t.equals(ClientQuotaEntity.CLIENT_ID))) {
            throw new IllegalStateException("Cannot replay " + record + ": the entity must name user and/or "
                    + "client-id");
        }
        if (!record.remove() && !(record.value() > 0 && Double.isFinite(record.value()))) {
            throw new IllegalStateException("Cannot replay " + record + ": a quota is positive and finite");
        }
        ClientQuotaEntity entity = new ClientQuotaEntity(parts);
        Map<String, Double> quotas = changedQuotaEntities.add(entity)
                ? new TreeMap<>(clientQuotas.getOrDefault(entity, Map.of()))
                : clientQuotas.get(entity);
        if (quotas == null) {
            quotas = new TreeMap<>();
        }
        if (record.remove()) {
            quotas.remove(record.key());
        } else {
            quotas.put(record.key(), record.value());
        }
        if (quotas.isEmpty()) {
            clientQuotas.remove(entity);
        } else {
            clientQuotas.put(entity, quotas);
        }
    }

    /** A user's credential for one mechanism is created or replaced. */
    private void replay(UserScramCredentialRecord record) {
        String mechanism = mechanismName(record, record.mechanism());
        if (record.user().isEmpty() || record.iterations() <= 0) {
            throw new IllegalStateException("Cannot replay " + record + ": empty user or iterations <= 0");
        }
        userCredentials(record.user()).put(mechanism, new ScramCredentialImage(record.salt(), record.storedKey(),
                record.serverKey(), record.iterations()));
    }

    /** A user's credential for one mechanism is deleted; a user left with none disappears from the image. */
    private void replay(RemoveUserScramCredentialRecord record) {
        String mechanism = mechanismName(record, record.mechanism());
        Map<String, ScramCredentialImage> credentials = userCredentials(record.user());
        if (credentials.remove(mechanism) == null) {
            throw new IllegalStateException("Cannot replay " + record + ": the user has no " + mechanism
                    + " credential");
        }
        if (credentials.isEmpty()) {
            scramCredentials.remove(record.user());
        }
    }

    private Map<String, ScramCredentialImage> userCredentials(String user) {
        Map<String, ScramCredentialImage> credentials = changedUsers.add(user)
                ? new TreeMap<>(scramCredentials.getOrDefault(user, Map.of()))
                : scramCredentials.get(user);
        if (credentials == null) {
            credentials = new TreeMap<>();
        }
        scramCredentials.put(user, credentials);
        return credentials;
    }

    private static String mechanismName(MetadataRecord record, byte type) {
        for (ScramMechanism mechanism : ScramMechanism.values()) {
            if (mechanism.type() == type) {
                return mechanism.mechanismName();
            }
        }
        throw new IllegalStateException("Cannot replay " + record + ": unknown SCRAM mechanism type " + type);
    }

    /** A group setting is set or (null value) removed; a group left with no setting disappears from the image. */
    private void replay(GroupConfigRecord record) {
        if (record.groupId().isEmpty()) {
            throw new IllegalStateException("Cannot replay " + record + ": the group id is empty");
        }
        Map<String, String> settings = changedGroups.add(record.groupId())
                ? new TreeMap<>(groupConfigs.getOrDefault(record.groupId(), Map.of()))
                : groupConfigs.get(record.groupId());
        if (settings == null) {
            settings = new TreeMap<>();
        }
        if (record.value() == null) {
            settings.remove(record.name());
        } else {
            settings.put(record.name(), record.value());
        }
        if (settings.isEmpty()) {
            groupConfigs.remove(record.groupId());
        } else {
            groupConfigs.put(record.groupId(), settings);
        }
    }

    /** The cluster id is set once; the same id again changes nothing, another one is refused. */
    private void replay(ClusterIdRecord record) {
        if (record.clusterId().isBlank()) {
            throw new IllegalStateException("Cannot replay " + record + ": the cluster id is blank");
        }
        if (clusterId != null && !clusterId.equals(record.clusterId())) {
            throw new IllegalStateException("Cannot replay " + record + ": the cluster id is already " + clusterId
                    + " and is set only once");
        }
        clusterId = record.clusterId();
    }

    /** A registration replaces the broker's earlier one, with a larger epoch, and starts fenced. */
    private void replay(BrokerRegistrationRecord record) {
        if (record.brokerId() < 0) {
            throw new IllegalStateException("Cannot replay " + record + ": negative broker id");
        }
        BrokerImage existing = brokers.get(record.brokerId());
        if (existing != null && record.brokerEpoch() <= existing.epoch()) {
            throw new IllegalStateException("Cannot replay " + record + ": broker " + record.brokerId()
                    + " is already registered with epoch " + existing.epoch() + " and its epoch may only grow");
        }
        brokers.put(record.brokerId(), new BrokerImage(record.brokerId(), record.incarnationId(),
                record.brokerEpoch(), record.host(), record.port(), record.rack(), BrokerState.FENCED,
                record.listeners()));
    }

    /** A state change must name the broker's current registration: a stale epoch is refused. */
    private void replay(BrokerStateRecord record) {
        BrokerImage existing = brokers.get(record.brokerId());
        if (existing == null) {
            throw new IllegalStateException("Cannot replay " + record + ": broker " + record.brokerId()
                    + " is not registered");
        }
        if (existing.epoch() != record.brokerEpoch()) {
            throw new IllegalStateException("Cannot replay " + record + ": broker " + record.brokerId()
                    + " is registered with epoch " + existing.epoch() + ", not " + record.brokerEpoch());
        }
        brokers.put(record.brokerId(), new BrokerImage(existing.id(), existing.incarnationId(), existing.epoch(),
                existing.host(), existing.port(), existing.rack(), record.state(), existing.listeners()));
    }

    /** Every id below the record's next producer id is taken; the next producer id must grow. */
    private void replay(ProducerIdsRecord record) {
        if (record.nextProducerId() <= nextProducerId) {
            throw new IllegalStateException("Cannot replay " + record + ": the next producer id is already "
                    + nextProducerId + " and may only grow, or producer ids would be handed out twice");
        }
        nextProducerId = record.nextProducerId();
    }

    private void replay(TopicRecord record) {
        if (topics.containsKey(record.name())) {
            throw new IllegalStateException("Cannot replay " + record + ": topic " + record.name()
                    + " already exists with id " + topics.get(record.name()).topicId());
        }
        if (namesById.containsKey(record.topicId())) {
            throw new IllegalStateException("Cannot replay " + record + ": topic id " + record.topicId()
                    + " already belongs to topic " + namesById.get(record.topicId()));
        }
        TopicImage topic = new TopicImage(record.name(), record.topicId(), Map.of(), Map.of());
        topics.put(record.name(), topic);
        namesById.put(record.topicId(), record.name());
    }

    private void replay(PartitionRecord record) {
        if (record.partition() < 0) {
            throw new IllegalStateException("Cannot replay " + record + ": negative partition number");
        }
        if (!record.replicas().containsAll(record.isr())) {
            throw new IllegalStateException("Cannot replay " + record + ": the ISR " + record.isr()
                    + " is not a subset of the replicas " + record.replicas());
        }
        if (record.leader() != -1 && !record.isr().contains(record.leader())) {
            throw new IllegalStateException("Cannot replay " + record + ": leader " + record.leader()
                    + " is not in the ISR " + record.isr());
        }
        if (!record.replicas().containsAll(record.addingReplicas())
                || !record.replicas().containsAll(record.removingReplicas())
                || record.addingReplicas().stream().anyMatch(record.removingReplicas()::contains)) {
            throw new IllegalStateException("Cannot replay " + record + ": adding and removing replicas must be "
                    + "disjoint subsets of the replicas");
        }
        TopicChange topic = change(topicName(record.topicId(), record));
        topic.partitions.put(record.partition(), new PartitionImage(record.partition(), record.replicas(),
                record.isr(), record.leader(), record.leaderEpoch(), record.partitionEpoch(),
                record.addingReplicas(), record.removingReplicas()));
    }

    private void replay(RemoveTopicRecord record) {
        String name = topicName(record.topicId(), record);
        topics.remove(name);
        changed.remove(name);
        namesById.remove(record.topicId());
    }

    private void replay(ConfigRecord record) {
        if (!topics.containsKey(record.topic())) {
            throw new IllegalStateException("Cannot replay " + record + ": no topic " + record.topic());
        }
        TopicChange topic = change(record.topic());
        if (record.value() == null) {
            topic.configs.remove(record.name());
        } else {
            topic.configs.put(record.name(), record.value());
        }
    }

    private String topicName(Uuid topicId, MetadataRecord record) {
        String name = namesById.get(topicId);
        if (name == null) {
            throw new IllegalStateException("Cannot replay " + record + ": no topic with id " + topicId);
        }
        return name;
    }

    private TopicChange change(String name) {
        return changed.computeIfAbsent(name, n -> new TopicChange(topics.get(n)));
    }

    /** The mutable working copy of one topic while a batch is replayed. */
    private static final class TopicChange {
        final String name;
        final Uuid topicId;
        final Map<Integer, PartitionImage> partitions;
        final Map<String, String> configs;

        TopicChange(TopicImage base) {
            this.name = base.name();
            this.topicId = base.topicId();
            this.partitions = new TreeMap<>(base.partitions());
            this.configs = new TreeMap<>(base.configs());
        }

        TopicImage toImage() {
            return new TopicImage(name, topicId, Collections.unmodifiableMap(partitions),
                    Collections.unmodifiableMap(configs));
        }
    }
}
