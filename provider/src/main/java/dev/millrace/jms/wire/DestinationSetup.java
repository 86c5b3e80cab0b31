package dev.millrace.jms.wire;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.DestinationPolicies;
import dev.millrace.jms.JmsExceptions;
import jakarta.jms.JMSException;

/**
 * Puts a destination's {@link DestinationPolicies.Policy} into the broker before its first consumer of a connection
 * reads it, and reads back the expiry queue consumers use:
 *
 * <pre>
 *   policy                 broker setting                                          resource
 *   ---------------------  ------------------------------------------------------  -----------------------------
 *   maxDeliveries          share.delivery.count.limit                              group millrace.queue.&lt;queue&gt;
 *   redeliveryDelayMs      share.redelivery.backoff.ms                             group millrace.queue.&lt;queue&gt;
 *   maxRedeliveryDelayMs   share.redelivery.backoff.max.ms                         group millrace.queue.&lt;queue&gt;
 *   deadLetterQueue        millrace.share.dlq.topic (the queue is created too)     topic &lt;queue&gt;
 *   expiryQueue            millrace.expiry.topic (the queue is created too)        topic &lt;destination&gt;
 * </pre>
 *
 * A queue's group also gets the settings every queue needs whatever the policy, as {@link QueueGroups} writes them for
 * queues that do not come here (temporary queues, browsers): {@code share.auto.offset.reset=earliest} and {@code
 * share.isolation.level=read_committed}, in the same describe and alter, also with {@code manageDestinationPolicies}
 * off.
 *
 * Settings are described first and only those that differ are altered, so connections that agree write nothing.
 * The dead-letter and expiry queues the policy names are described in the same request, so that one that exists costs
 * no lookup of its own.
 * The policy is a property of the destination: connections with different policies for one destination overwrite
 * each other's, the last to start a consumer winning. With {@code manageDestinationPolicies} off nothing is written
 * and whatever an administrator set (with Kafka's tools) applies. Dead-letter and expiry queues are created when
 * missing, also with {@code autoCreateDestinations} off, with {@code destinationPartitions} partitions.
 *
 * <p>Once per destination and connection; thread-safe.
 */
public final class DestinationSetup {

    /** How long a topic that should exist may be unknown to the broker asked (its metadata on the way there). */
    static final long MISSING_TOPIC_GRACE_MS = 3_000;
    private static final long MISSING_TOPIC_RETRY_MS = 50;

    /** Topic config: the dead-letter topic of a share-group topic (the broker copies archived records there). */
    public static final String DLQ_TOPIC_CONFIG = "millrace.share.dlq.topic";
    /** Topic config: where consumers move expired messages of the topic. */
    public static final String EXPIRY_TOPIC_CONFIG = "millrace.expiry.topic";
    static final String DELIVERY_COUNT_LIMIT = "share.delivery.count.limit";
    static final String REDELIVERY_BACKOFF_MS = "share.redelivery.backoff.ms";
    static final String REDELIVERY_BACKOFF_MAX_MS = "share.redelivery.backoff.max.ms";

    private final Admin admin;
    private final ConnectionSettings settings;
    private final Destinations destinations;
    /** Destination name to its expiry queue (empty: none). */
    private final Map<String, Optional<String>> prepared = new ConcurrentHashMap<>();

    public DestinationSetup(Admin admin, ConnectionSettings settings, Destinations destinations) {
        this.admin = admin;
        this.settings = settings;
        this.destinations = destinations;
    }

    /**
     * Applies the policy of destination {@code name} (which exists) and returns its expiry queue, if it has one.
     *
     * @param shareGroup the queue's share group, or null for a topic
     */
    public Optional<String> prepare(String name, String shareGroup) throws JMSException {
        return prepare(name, shareGroup, null);
    }

    /**
     * As {@link #prepare(String, String)} for a destination that may not exist yet: when this connection has not seen
     * it, the description of its settings tells, and a missing one is then made sure of as
     * {@link Destinations#ensure(String, boolean)} does (created, or {@link jakarta.jms.InvalidDestinationException}).
     * This saves the connection's first consumer of a destination the lookup of its own that {@code ensure} would
     * make.
     *
     * @param queue whether the destination is a queue (for the queues a created one gets)
     */
    public Optional<String> prepareOrCreate(String name, String shareGroup, boolean queue) throws JMSException {
        return prepare(name, shareGroup, queue);
    }

    /** {@code createAsQueue}: null when the destination exists, else whether it is a queue if it must be created. */
    private Optional<String> prepare(String name, String shareGroup, Boolean createAsQueue) throws JMSException {
        Optional<String> known = prepared.get(name);
        if (known != null) {
            return known;
        }
        DestinationPolicies.Policy policy = settings.destinationPolicies().policyFor(name);
        ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, name);
        ConfigResource group = shareGroup == null ? null : new ConfigResource(ConfigResource.Type.GROUP, shareGroup);
        List<ConfigResource> resources = new ArrayList<>(group == null ? List.of(topic) : List.of(topic, group));
        // the queues the policy names, described in the same request: one that exists needs no lookup of its own
        Set<ConfigResource> companions = new HashSet<>();
        if (settings.manageDestinationPolicies()) {
            for (String queue : Arrays.asList(policy.expiryQueue(), group == null ? null : policy.deadLetterQueue())) {
                if (queue != null && !destinations.isKnown(queue)) {
                    companions.add(new ConfigResource(ConfigResource.Type.TOPIC, queue));
                }
            }
        }
        resources.addAll(companions);
        Set<ConfigResource> mayBeMissing = new HashSet<>(companions);
        boolean unseen = createAsQueue != null && !destinations.isKnown(name);
        if (unseen) {
            mayBeMissing.add(topic);
        }
        Map<ConfigResource, Config> current = describe(name, resources, mayBeMissing);
        if (unseen) {
            if (!current.containsKey(topic)) {
                destinations.ensure(name, createAsQueue);
                return prepare(name, shareGroup, null);
            }
            destinations.markKnown(name);
        }
        for (ConfigResource companion : companions) {
            if (current.containsKey(companion)) {
                destinations.markKnown(companion.name());
            }
        }
        String expiry = value(current.get(topic), EXPIRY_TOPIC_CONFIG);
        Map<ConfigResource, Collection<AlterConfigOp>> changes = new HashMap<>();
        if (group != null) {
            addChanges(changes, group, current.get(group), QueueGroups.QUEUE_SETTINGS);
        }
        if (settings.manageDestinationPolicies()) {
            Map<String, String> topicWanted = new HashMap<>();
            if (policy.expiryQueue() != null) {
                destinations.ensureCreated(policy.expiryQueue());
                topicWanted.put(EXPIRY_TOPIC_CONFIG, policy.expiryQueue());
                expiry = policy.expiryQueue();
            }
            if (group != null) {
                if (policy.deadLetterQueue() != null) {
                    destinations.ensureCreated(policy.deadLetterQueue());
                    topicWanted.put(DLQ_TOPIC_CONFIG, policy.deadLetterQueue());
                }
                addChanges(changes, group, current.get(group), Map.of(
                        DELIVERY_COUNT_LIMIT, String.valueOf(policy.maxDeliveries()),
                        REDELIVERY_BACKOFF_MS, String.valueOf(policy.redeliveryDelayMs()),
                        REDELIVERY_BACKOFF_MAX_MS, String.valueOf(policy.maxRedeliveryDelayMs())));
            }
            addChanges(changes, topic, current.get(topic), topicWanted);
        }
        alter(name, changes);
        Optional<String> result = Optional.ofNullable(expiry == null || expiry.isEmpty() ? null : expiry);
        prepared.put(name, result);
        return result;
    }

    /**
     * The settings of {@code resources}; those of {@code mayBeMissing} (topics) are left out when the topic does not
     * exist, any other failure fails the whole.
     */
    private Map<ConfigResource, Config> describe(String name, List<ConfigResource> resources,
                                                 Set<ConfigResource> mayBeMissing) throws JMSException {
        // a topic just created (by this connection or another client) is known to every broker only once its
        // metadata reached it: on a cluster, the broker asked may not know it yet for a moment, so a topic that
        // should exist and is unknown is asked about again for up to MISSING_TOPIC_GRACE_MS
        long graceEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(MISSING_TOPIC_GRACE_MS);
        while (true) {
            try {
                return describeOnce(name, resources, mayBeMissing);
            } catch (JMSException e) {
                if (!(e.getLinkedException() instanceof UnknownTopicOrPartitionException)
                        || System.nanoTime() - graceEnd > 0) {
                    throw e;
                }
                try {
                    Thread.sleep(MISSING_TOPIC_RETRY_MS);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    private Map<ConfigResource, Config> describeOnce(String name, List<ConfigResource> resources,
                                                     Set<ConfigResource> mayBeMissing) throws JMSException {
        Map<ConfigResource, KafkaFuture<Config>> futures = admin.describeConfigs(resources).values();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.requestTimeoutMs());
        Map<ConfigResource, Config> out = new HashMap<>();
        try {
            for (ConfigResource resource : resources) {
                try {
                    out.put(resource, futures.get(resource).get(Math.max(0, deadline - System.nanoTime()),
                            TimeUnit.NANOSECONDS));
                } catch (ExecutionException e) {
                    if (!(mayBeMissing.contains(resource) && e.getCause() instanceof UnknownTopicOrPartitionException)) {
                        throw e;
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw JmsExceptions.fromClient("read the settings of destination " + name, e);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("read the settings of destination " + name, e);
        }
        return out;
    }

    private void alter(String name, Map<ConfigResource, Collection<AlterConfigOp>> changes) throws JMSException {
        if (changes.isEmpty()) {
            return;
        }
        try {
            admin.incrementalAlterConfigs(changes).all().get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw JmsExceptions.fromClient("set the settings of destination " + name, e);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("set the settings of destination " + name, e);
        }
    }

    private static void addChanges(Map<ConfigResource, Collection<AlterConfigOp>> changes, ConfigResource resource,
                                   Config current, Map<String, String> wanted) {
        List<AlterConfigOp> ops = new ArrayList<>(changes.getOrDefault(resource, List.of()));
        wanted.forEach((key, value) -> {
            if (!value.equals(value(current, key))) {
                ops.add(new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET));
            }
        });
        if (!ops.isEmpty()) {
            changes.put(resource, ops);
        }
    }

    private static String value(Config config, String key) {
        ConfigEntry entry = config == null ? null : config.get(key);
        return entry == null ? null : entry.value();
    }
}
