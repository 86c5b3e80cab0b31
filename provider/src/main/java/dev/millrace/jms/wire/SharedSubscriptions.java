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
 *   <li>If the group has active members on another topic or with another selector: JMSException (JMS 3.1 8.3).
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
    private final Map<String, Integer> open = new ConcurrentHashMap<>();

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
        Collection<ShareMemberDescription> members = members(group);
        String rack = MemberSelector.encodeSubscription(selector);
        for (ShareMemberDescription m : members) {
            Set<String> topics = m.assignment().topicPartitions().stream().map(TopicPartition::topic)
                    .collect(Collectors.toSet());
            boolean otherTopic = !topics.isEmpty() && !topics.equals(Set.of(topic));
            if (otherTopic || !Objects.equals(m.rackId().orElse(null), rack)) {
                throw new IllegalStateException("shared subscription " + group + " has an active consumer on topic(s) "
                        + topics + " with selector " + m.rackId().flatMap(MemberSelector::decode).orElse("(none)")
                        + "; a consumer on " + topic + " with selector " + (selector == null ? "(none)" : selector)
                        + " needs it to have no consumers");
            }
        }
        Map<TopicPartition, SharePartitionOffsetInfo> state = state(group);
        if (members.isEmpty() && state.keySet().stream().anyMatch(tp -> !tp.topic().equals(topic))) {
            delete(group);
            state = Map.of();
        }
        configure(group);
        pinToEnd(group, topic, state);
    }

    /** A consumer of this connection joined {@code group}. */
    public void opened(String group) {
        open.merge(group, 1, Integer::sum);
    }

    /**
     * A consumer of this connection left {@code group}; when it was the last one and the subscription is not durable,
     * the subscription is deleted unless another connection still uses it.
     */
    public void closed(String group, boolean durable) {
        Integer left = open.computeIfPresent(group, (g, n) -> n <= 1 ? null : n - 1);
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
            admin.deleteShareGroups(List.of(group)).all().get(settings.requestTimeoutMs(), TimeUnit.MILLISECONDS);
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
                    .get(settings.requestTimeoutMs(), TimeUnit.MILLISECONDS);
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
                    .partitionsToOffsetInfo(group).get(settings.requestTimeoutMs(), TimeUnit.MILLISECONDS);
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
            admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get(settings.requestTimeoutMs(),
                    TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("configure shared subscription " + group, e);
        }
    }

    private void pinToEnd(String group, String topic, Map<TopicPartition, SharePartitionOffsetInfo> state)
            throws JMSException {
        try {
            int partitions = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(settings.requestTimeoutMs(), TimeUnit.MILLISECONDS).get(topic).partitions().size();
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
                    .get(settings.requestTimeoutMs(), TimeUnit.MILLISECONDS)
                    .forEach((tp, info) -> ends.put(tp, info.offset()));
            admin.alterShareGroupOffsets(group, ends).all().get(settings.requestTimeoutMs(), TimeUnit.MILLISECONDS);
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
