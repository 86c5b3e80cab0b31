package dev.millrace.jms.wire;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupNotEmptyException;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.JmsExceptions;
import dev.millrace.protocol.selector.MemberSelector;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSException;

/**
 * JMS 2.0 shared subscriptions of one connection, each a share group on the topic:
 *
 * <pre>
 *   createSharedConsumer(topic, name)         share group  millrace.shared.&lt;clientId or empty&gt;.&lt;name&gt;
 *   createSharedDurableConsumer(topic, name)  share group  millrace.shareddurable.&lt;clientId or empty&gt;.&lt;name&gt;
 * </pre>
 *
 * Every consumer of a subscription is a member of its group, so the broker hands each message to one of them. A
 * consumer's selector travels as a subscription selector ({@link MemberSelector#encodeSubscription}): the broker
 * archives what it does not match, as those messages are not part of the subscription.
 *
 * <p>{@link #prepare} runs before a consumer joins:
 * <ol>
 *   <li>If the subscription has an active consumer on another topic or with another selector: JMSException
 *       (JMSRuntimeException from a JMSContext), as the createSharedConsumer and createSharedDurableConsumer javadoc
 *       and JMS 3.1 8.3 say. Active consumers are this connection's open ones (known here at once) and the group's
 *       members at the broker (other connections'): a member's selector is its rack id, its topic the one its
 *       assignment or the group's share state names. A consumer's creation returns once its member shows in the
 *       group ({@link #awaitMember}, up to the request timeout), so that from then on other connections see it too;
 *       two connections creating consumers with different selectors at the same instant may both succeed.
 *   <li>If it has none but has state on another topic, the old subscription is deleted first (a durable one is
 *       replaced, as the specification says; a non-durable one is stale).
 *   <li>A new subscription starts at the end of the topic: the group is configured with
 *       {@code share.auto.offset.reset=latest} and {@code share.isolation.level=read_committed}, and the start offset
 *       of every partition it has no state for is pinned to the partition's end with AlterShareGroupOffsets, now,
 *       so that a message sent after the consumer is created is delivered even if it is sent before the consumer's
 *       first fetch. Two connections creating the same new subscription at the same moment may each pin it; the
 *       later pin wins (messages sent in between are not delivered).
 * </ol>
 * What is not checked: a durable shared subscription without active consumers whose selector changes keeps its
 * messages (the broker has nowhere to keep the old selector); the new selector applies to them from then on.
 *
 * <p>A non-durable subscription is deleted (DeleteGroups on the share group) when this connection closes the last
 * consumer it has on it; a NON_EMPTY_GROUP answer means another connection still uses it and is ignored.
 *
 * <p>Thread-safe.
 */
public final class SharedSubscriptions {

    private final Admin admin;
    private final ConnectionSettings settings;
    /** How often {@link #awaitMember} looks at the group. */
    private static final long MEMBER_CHECK_INTERVAL_MS = 10;

    /** This connection's open consumers of a subscription, with the topic and selector they were created with. */
    private record Use(int consumers, String topic, String selector) {
    }

    private final Map<String, Use> open = new ConcurrentHashMap<>();

    public SharedSubscriptions(Admin admin, ConnectionSettings settings) {
        this.admin = admin;
        this.settings = settings;
    }

    /** The share group of a shared subscription. */
    public static String group(boolean durable, String clientId, String name) {
        return (durable ? "millrace.shareddurable." : "millrace.shared.") + (clientId == null ? "" : clientId) + "."
                + name;
    }

    /**
     * Makes sure shared subscription {@code group} can take a consumer on {@code topic} with {@code selector} (null
     * for none), creating it at the topic's end when new. See the class comment.
     */
    public void prepare(String group, String topic, String selector) throws JMSException {
        Use own = open.get(group);
        if (own != null && (!own.topic().equals(topic) || !Objects.equals(own.selector(), selector))) {
            throw conflict(group, Set.of(own.topic()), own.selector(), topic, selector);
        }
        Collection<ShareMemberDescription> members = members(group);
        String rack = MemberSelector.encodeSubscription(selector);
        for (ShareMemberDescription m : members) {
            Set<String> topics = m.assignment().topicPartitions().stream().map(TopicPartition::topic)
                    .collect(Collectors.toSet());
            boolean otherTopic = !topics.isEmpty() && !topics.equals(Set.of(topic));
            if (otherTopic || !Objects.equals(m.rackId().orElse(null), rack)) {
                throw conflict(group, topics, m.rackId().flatMap(MemberSelector::decode).orElse(null), topic,
                        selector);
            }
        }
        Map<TopicPartition, SharePartitionOffsetInfo> state = state(group);
        Set<String> stateTopics = state.keySet().stream().map(TopicPartition::topic).collect(Collectors.toSet());
        if (!members.isEmpty() && stateTopics.stream().anyMatch(t -> !t.equals(topic))) {
            // a member's assignment may still be empty; the state its consumer pinned names the topic
            throw conflict(group, stateTopics, members.iterator().next().rackId().flatMap(MemberSelector::decode)
                    .orElse(null), topic, selector);
        }
        if (members.isEmpty() && stateTopics.stream().anyMatch(t -> !t.equals(topic))) {
            delete(group);
            state = Map.of();
        }
        configure(group);
        pinToEnd(group, topic, state);
    }

    private static JMSException conflict(String group, Set<String> activeTopics, String activeSelector, String topic,
                                         String selector) {
        return new JMSException("shared subscription " + group + " has an active consumer on topic(s) " + activeTopics
                + " with selector " + (activeSelector == null ? "(none)" : activeSelector) + "; a consumer on "
                + topic + " with selector " + (selector == null ? "(none)" : selector)
                + " needs the same topic and selector, or the subscription to have no active consumer");
    }

    /** A consumer of this connection joined {@code group}, on {@code topic} with {@code selector} (null for none). */
    public void opened(String group, String topic, String selector) {
        open.merge(group, new Use(1, topic, selector),
                (a, b) -> new Use(a.consumers() + 1, a.topic(), a.selector()));
    }

    /**
     * Waits until the share consumer with client id {@code clientId} is a member of {@code group} at the broker, so
     * that other connections' {@link #prepare} see it; looks every {@value #MEMBER_CHECK_INTERVAL_MS} ms, up to the
     * request timeout, and returns quietly when it does not show (the cross-connection check is then best effort).
     * Blocks the calling thread.
     */
    public void awaitMember(String group, String clientId) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.requestTimeoutMs());
        try {
            while (members(group).stream().noneMatch(m -> clientId.equals(m.clientId()))) {
                if (System.nanoTime() >= deadline) {
                    return;
                }
                Thread.sleep(MEMBER_CHECK_INTERVAL_MS);
            }
        } catch (JMSException e) {
            // best effort: the consumer works without it
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A consumer of this connection left {@code group}; when it was the last one and the subscription is not durable,
     * the subscription is deleted unless another connection still uses it.
     */
    public void closed(String group, boolean durable) {
        Use left = open.computeIfPresent(group,
                (g, u) -> u.consumers() <= 1 ? null : new Use(u.consumers() - 1, u.topic(), u.selector()));
        if (left == null && !durable) {
            try {
                delete(group);
            } catch (JMSException e) {
                // another connection's consumers keep it; the last of them deletes it
            }
        }
    }

    /** Whether this connection has a consumer on {@code group}. */
    public boolean isOpen(String group) {
        return open.containsKey(group);
    }

    /**
     * Deletes shared subscription {@code group}.
     *
     * @return false if it did not exist
     * @throws IllegalStateException if it has active consumers
     */
    public boolean delete(String group) throws JMSException {
        try {
            admin.deleteShareGroups(List.of(group)).all().get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
            return true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return false;
            }
            if (e.getCause() instanceof GroupNotEmptyException) {
                throw new IllegalStateException("shared subscription " + group + " has active consumers");
            }
            throw JmsExceptions.fromClient("delete shared subscription " + group, e);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("delete shared subscription " + group, e);
        }
    }

    private Collection<ShareMemberDescription> members(String group) throws JMSException {
        try {
            ShareGroupDescription d = admin.describeShareGroups(List.of(group)).describedGroups().get(group)
                    .get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
            return d.members();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return List.of();
            }
            throw JmsExceptions.fromClient("describe shared subscription " + group, e);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("describe shared subscription " + group, e);
        }
    }

    private Map<TopicPartition, SharePartitionOffsetInfo> state(String group) throws JMSException {
        try {
            return admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group).get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return Map.of();
            }
            throw JmsExceptions.fromClient("look up shared subscription " + group, e);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("look up shared subscription " + group, e);
        }
    }

    private void configure(String group) throws JMSException {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        List<AlterConfigOp> ops = List.of(
                new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "latest"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("share.isolation.level", "read_committed"),
                        AlterConfigOp.OpType.SET));
        try {
            admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get(settings.blockingTimeoutMs(),
                    TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("configure shared subscription " + group, e);
        }
    }

    private void pinToEnd(String group, String topic, Map<TopicPartition, SharePartitionOffsetInfo> state)
            throws JMSException {
        try {
            int partitions = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS).get(topic).partitions().size();
            Map<TopicPartition, OffsetSpec> fresh = new HashMap<>();
            for (int p = 0; p < partitions; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                SharePartitionOffsetInfo info = state.get(tp);
                if (info == null || info.startOffset() < 0) {
                    fresh.put(tp, OffsetSpec.latest());
                }
            }
            if (fresh.isEmpty()) {
                return;
            }
            Map<TopicPartition, Long> ends = new HashMap<>();
            admin.listOffsets(fresh, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all()
                    .get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS)
                    .forEach((tp, info) -> ends.put(tp, info.offset()));
            admin.alterShareGroupOffsets(group, ends).all().get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof GroupNotEmptyException)) {
                throw JmsExceptions.fromClient("start shared subscription " + group, e);
            }
            // a consumer of another connection joined meanwhile: the subscription exists now
        } catch (Exception e) {
            throw JmsExceptions.fromClient("start shared subscription " + group, e);
        }
    }
}
