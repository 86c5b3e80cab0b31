package dev.millrace.jms.wire;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.DestinationPolicies;
import dev.millrace.jms.JmsExceptions;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;

/**
 * The topics behind a connection's destinations: checks that a destination exists before its first use and, with
 * {@code autoCreateDestinations}, creates it with {@code destinationPartitions} partitions and the broker's other
 * topic defaults. Remembers what it has seen, so each destination costs one round trip per connection. Thread-safe.
 *
 * <p>A destination created here is created with its {@link DestinationPolicies.Policy} already in place when
 * {@code manageDestinationPolicies} is on: the topic configs naming its expiry queue and, for a queue, its dead-letter
 * queue ({@link DestinationSetup#EXPIRY_TOPIC_CONFIG}, {@link DestinationSetup#DLQ_TOPIC_CONFIG}), and those queues
 * themselves, all in one CreateTopics request. {@link DestinationSetup} then finds nothing to change when the first
 * consumer comes, where it would otherwise create the queues and alter the topic, two more rounds through the
 * controller (4-14 ms each, measured on a single node) before the consumer could join. It still checks and applies the policy
 * of the consumer's connection (another connection may have created the destination with another policy).
 */
public final class Destinations {

    private final Admin admin;
    private final ConnectionSettings settings;
    private final Set<String> known = ConcurrentHashMap.newKeySet();
    private volatile Boolean brokerAutoCreate;

    /** The broker setting that, when false, forbids creating destinations on first use. */
    static final String AUTO_CREATE = "auto.create.topics.enable";

    public Destinations(Admin admin, ConnectionSettings settings) {
        this.admin = admin;
        this.settings = settings;
    }

    /**
     * Makes sure the topic exists.
     *
     * @throws InvalidDestinationException naming it, when it does not exist and may not be created
     */
    public void ensure(String name) throws JMSException {
        ensure(name, false);
    }

    /**
     * As {@link #ensure(String)}; a destination it creates gets its policy's settings and queues (see the class
     * comment), a dead-letter queue only when {@code queue}.
     */
    public void ensure(String name, boolean queue) throws JMSException {
        if (known.contains(name)) {
            return;
        }
        if (exists(name)) {
            known.add(name);
            return;
        }
        if (!settings.autoCreateDestinations()) {
            throw new InvalidDestinationException("destination " + name + " does not exist (autoCreateDestinations "
                    + "is off)");
        }
        if (!brokerAllowsAutoCreate()) {
            throw new InvalidDestinationException("destination " + name + " does not exist (the broker's "
                    + AUTO_CREATE + " is false)");
        }
        createWithPolicy(name, queue);
    }

    /**
     * Creates destination {@code name} with its policy's topic configs and, in the same request, the expiry and
     * dead-letter queues they name (those that exist already are left as they are).
     */
    private void createWithPolicy(String name, boolean queue) throws JMSException {
        Map<String, String> configs = new HashMap<>();
        Set<String> companions = new LinkedHashSet<>(); // an expiry queue may be the dead-letter queue too
        if (settings.manageDestinationPolicies()) {
            DestinationPolicies.Policy policy = settings.destinationPolicies().policyFor(name);
            if (policy.expiryQueue() != null) {
                configs.put(DestinationSetup.EXPIRY_TOPIC_CONFIG, policy.expiryQueue());
                companions.add(policy.expiryQueue());
            }
            if (queue && policy.deadLetterQueue() != null) {
                configs.put(DestinationSetup.DLQ_TOPIC_CONFIG, policy.deadLetterQueue());
                companions.add(policy.deadLetterQueue());
            }
        }
        List<NewTopic> topics = new ArrayList<>();
        topics.add(newTopic(name, settings.destinationPartitions()).configs(configs));
        for (String companion : companions) {
            if (!companion.equals(name) && !known.contains(companion)) {
                topics.add(newTopic(companion, settings.destinationPartitions()));
            }
        }
        Map<String, KafkaFuture<Void>> results = admin.createTopics(topics).values();
        for (NewTopic topic : topics) {
            awaitCreated(topic.name(), results.get(topic.name()));
        }
    }

    private NewTopic newTopic(String name, int partitions) {
        return new NewTopic(name, Optional.of(partitions), Optional.of(settings.destinationReplicationFactor()));
    }

    private void awaitCreated(String name, KafkaFuture<Void> created) throws JMSException {
        try {
            created.get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw JmsExceptions.fromClient("create destination " + name, e);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw JmsExceptions.fromClient("create destination " + name, e);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("create destination " + name, e);
        }
        known.add(name);
    }

    /** Whether this connection has seen topic {@code name} exist (or created it). */
    public boolean isKnown(String name) {
        return known.contains(name);
    }

    /** Records that topic {@code name} exists (another request of this connection saw it). */
    public void markKnown(String name) {
        known.add(name);
    }

    /**
     * Makes sure a destination the provider itself needs (a dead-letter or expiry queue) exists, creating it with
     * {@code destinationPartitions} partitions regardless of autoCreateDestinations.
     */
    public void ensureCreated(String name) throws JMSException {
        if (!known.contains(name) && !exists(name)) {
            create(name, settings.destinationPartitions());
        }
        known.add(name);
    }

    /** Makes sure a one-partition internal topic exists, creating it regardless of autoCreateDestinations. */
    public void ensureInternal(String name) throws JMSException {
        if (!known.contains(name) && !exists(name)) {
            create(name, 1);
        }
    }

    /** Creates a topic that must not exist yet (temporary destinations). */
    public void create(String name, int partitions) throws JMSException {
        awaitCreated(name, admin.createTopics(List.of(newTopic(name, partitions))).all());
    }

    public void delete(String name) throws JMSException {
        known.remove(name);
        try {
            admin.deleteTopics(List.of(name)).all().get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                throw JmsExceptions.fromClient("delete destination " + name, e);
            }
        } catch (Exception e) {
            throw JmsExceptions.fromClient("delete destination " + name, e);
        }
    }

    /** Deletes a consumer group (a durable subscription's offsets); false if there was none. */
    public boolean deleteGroup(String groupId) throws JMSException {
        try {
            admin.deleteConsumerGroups(List.of(groupId)).all().get(settings.blockingTimeoutMs(),
                    TimeUnit.MILLISECONDS);
            return true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.GroupIdNotFoundException) {
                return false;
            }
            throw JmsExceptions.fromClient("delete subscription group " + groupId, e);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("delete subscription group " + groupId, e);
        }
    }

    /**
     * Whether the broker lets applications create destinations on first use: its {@value #AUTO_CREATE} setting, read
     * once per {@link SharedClients} entry (connections with the same settings) with DescribeConfigs of a broker. A
     * broker that does not report it allows it.
     */
    private boolean brokerAllowsAutoCreate() throws JMSException {
        Boolean allowed = brokerAutoCreate;
        if (allowed != null) {
            return allowed;
        }
        try {
            Collection<Node> nodes = admin.describeCluster().nodes().get(settings.blockingTimeoutMs(),
                    TimeUnit.MILLISECONDS);
            if (nodes.isEmpty()) {
                return true;
            }
            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER,
                    String.valueOf(nodes.iterator().next().id()));
            Config config = admin.describeConfigs(List.of(broker)).all().get(settings.blockingTimeoutMs(),
                    TimeUnit.MILLISECONDS).get(broker);
            ConfigEntry entry = config == null ? null : config.get(AUTO_CREATE);
            allowed = entry == null || entry.value() == null || Boolean.parseBoolean(entry.value());
        } catch (Exception e) {
            throw JmsExceptions.fromClient("read the broker's " + AUTO_CREATE, e);
        }
        brokerAutoCreate = allowed;
        return allowed;
    }

    private boolean exists(String name) throws JMSException {
        try {
            Map<String, ?> found = admin.describeTopics(List.of(name)).allTopicNames()
                    .get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
            return found.containsKey(name);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return false;
            }
            throw JmsExceptions.fromClient("look up destination " + name, e);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("look up destination " + name, e);
        }
    }
}
