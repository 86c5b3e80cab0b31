package dev.millrace.jms.wire;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.JmsExceptions;
import jakarta.jms.JMSException;

/**
 * Removes the temporary destinations of connections that are gone without closing (a crashed client).
 *
 * <pre>
 * temporary destination topic:  millrace.tmp.{queue|topic}.&lt;owner connection id&gt;.&lt;n&gt;
 * owner's liveness:             membership of share group millrace.tmp-owner.&lt;owner connection id&gt;
 *                               (joined before its first temporary destination is created, see
 *                               {@link ClientIdClaim#hold}; the broker drops it after its share session timeout)
 * sweep:                        every temporary topic whose owner group lists no member, on a sweep and
 *                               again on one at least failoverTimeoutMs later, is deleted
 * </pre>
 *
 * <p>The second look protects a live owner across a failover: while its group's coordinator restarts or moves, the
 * group may list no member until the owner's membership has joined again (which it does within the failover
 * window, or its connection is broken anyway).
 *
 * <p>Any live connection sweeps: after it creates a temporary destination, and periodically. Thread-safe: the owners
 * seen without members are remembered per JVM; a sweep costs one topic listing and one share-group description per
 * owner.
 */
public final class TemporaryDestinationReaper {

    /** Prefix of every temporary destination's topic. */
    public static final String PREFIX = "millrace.tmp.";

    /** Owners whose group listed no member, and since when (nanoTime); cleared when it lists one again. */
    private static final Map<String, Long> SEEN_WITHOUT_MEMBERS = new java.util.concurrent.ConcurrentHashMap<>();

    private TemporaryDestinationReaper() {
    }

    /** The share group whose membership shows that connection {@code connectionId} is alive. */
    public static String ownerGroup(String connectionId) {
        return "millrace.tmp-owner." + connectionId;
    }

    /** The owner connection id in a temporary destination's name, or null if the name is not one. */
    static String ownerOf(String topic) {
        if (!topic.startsWith(PREFIX)) {
            return null;
        }
        String[] parts = topic.substring(PREFIX.length()).split("\\.");
        return parts.length == 3 ? parts[1] : null;
    }

    /**
     * Deletes the temporary destinations whose owners (other than {@code ownConnectionId}) hold no membership.
     *
     * @return the topics deleted
     */
    public static List<String> sweep(Admin admin, ConnectionSettings settings, String ownConnectionId)
            throws JMSException {
        Map<String, List<String>> byOwner = new HashMap<>();
        try {
            Set<String> names = admin.listTopics(new ListTopicsOptions().listInternal(false)).names()
                    .get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
            for (String name : names) {
                String owner = ownerOf(name);
                if (owner != null && !owner.equals(ownConnectionId)) {
                    byOwner.computeIfAbsent(owner, o -> new ArrayList<>()).add(name);
                }
            }
        } catch (Exception e) {
            throw JmsExceptions.fromClient("list temporary destinations", e);
        }
        List<String> deleted = new ArrayList<>();
        for (Map.Entry<String, List<String>> entry : byOwner.entrySet()) {
            String group = ownerGroup(entry.getKey());
            if (!ClientIdClaim.members(admin, group, settings).isEmpty()) {
                SEEN_WITHOUT_MEMBERS.remove(entry.getKey());
                continue;
            }
            long now = System.nanoTime();
            long since = SEEN_WITHOUT_MEMBERS.computeIfAbsent(entry.getKey(), o -> now);
            if (settings.failoverTimeoutMs() > 0
                    && now - since < TimeUnit.MILLISECONDS.toNanos(settings.failoverTimeoutMs())) {
                continue; // look again on a later sweep
            }
            SEEN_WITHOUT_MEMBERS.remove(entry.getKey());
            try {
                admin.deleteTopics(entry.getValue()).all().get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
                deleted.addAll(entry.getValue());
            } catch (ExecutionException e) {
                // another connection's sweep may have deleted them first; the next sweep tries again otherwise
            } catch (Exception e) {
                throw JmsExceptions.fromClient("delete temporary destinations " + entry.getValue(), e);
            }
            deleteGroupQuietly(admin, group, settings);
        }
        return deleted;
    }

    private static void deleteGroupQuietly(Admin admin, String group, ConnectionSettings settings) {
        try {
            admin.deleteShareGroups(List.of(group)).all().get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            // best effort: an empty group holds nothing, and the next sweep does not need it gone
        }
    }
}
