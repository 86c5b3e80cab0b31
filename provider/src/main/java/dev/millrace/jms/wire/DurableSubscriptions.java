package dev.millrace.jms.wire;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.JmsExceptions;
import jakarta.jms.JMSException;

/**
 * What an unshared durable subscription (consumer group {@code millrace.sub.<clientId>.<name>}) was created with, kept
 * in the metadata string of each of its committed offsets:
 *
 * <pre>
 *   millrace.sub.v1;noLocal=&lt;true|false&gt;;selector=&lt;selector text, empty for none&gt;
 * </pre>
 *
 * Recreating the subscription with another topic (the group has offsets on another topic), another noLocal or another
 * selector replaces it: the old group is deleted and the new subscription starts at the end of its topic (JMS 3.1
 * "changing a durable subscription" is an unsubscribe followed by a new subscription). Offsets committed without
 * Millrace metadata (empty, as subscriptions made before this format, or a Kafka tool, wrote them) are taken to
 * match, so such a subscription is kept. Stateless.
 */
public final class DurableSubscriptions {

    private static final String PREFIX = "millrace.sub.v1;";

    private DurableSubscriptions() {
    }

    /** The commit metadata of a durable subscription with {@code noLocal} and {@code selector} (null: none). */
    public static String metadata(boolean noLocal, String selector) {
        return PREFIX + "noLocal=" + noLocal + ";selector=" + (selector == null ? "" : selector);
    }

    /**
     * Deletes {@code groupId} when its committed offsets say it was created for another topic or with other
     * metadata.
     *
     * @return whether it was replaced
     */
    public static boolean replaceIfChanged(Admin admin, ConnectionSettings settings, String groupId, String topic,
                                           String metadata) throws JMSException {
        Map<TopicPartition, OffsetAndMetadata> offsets;
        try {
            offsets = admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata()
                    .get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return false;
            }
            throw JmsExceptions.fromClient("look up durable subscription " + groupId, e);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("look up durable subscription " + groupId, e);
        }
        boolean changed = false;
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            String stored = e.getValue() == null ? "" : e.getValue().metadata();
            boolean otherMetadata = stored != null && stored.startsWith(PREFIX) && !stored.equals(metadata);
            changed |= !e.getKey().topic().equals(topic) || otherMetadata;
        }
        if (!changed) {
            return false;
        }
        try {
            admin.deleteConsumerGroups(List.of(groupId)).all().get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("replace durable subscription " + groupId, e);
        }
        return true;
    }
}
