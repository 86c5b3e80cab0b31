package dev.millrace.jms.wire;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.JmsExceptions;
import jakarta.jms.InvalidClientIDException;
import jakarta.jms.JMSException;

/**
 * A connection's hold on its client id across the whole broker cluster: membership of the share group
 * {@code millrace.client-id.<clientId>} (subscribed to the internal, empty topic {@value #TOPIC}).
 *
 * <pre>
 * claim:   group has members?  -> InvalidClientIDException
 *          join (share consumer with client.id = connection id), wait until the group lists us
 *          anyone else joined meanwhile?  -> leave, InvalidClientIDException (both racers may lose; never both win)
 * hold:    {@link #keepAlive()} polls every connection check (heartbeats run in the client's background)
 * release: close leaves the group; a crashed holder is dropped after the broker's share session timeout
 * </pre>
 *
 * <p>Share groups are used because a member is listed as soon as its first heartbeat arrives, without the rebalance
 * delay of classic consumer groups. Not thread-safe: one thread (the connection's monitor) uses it.
 */
public final class ClientIdClaim implements AutoCloseable {

    /** The internal topic the claim groups subscribe to; nothing is written to it. */
    public static final String TOPIC = "__millrace_client_ids";

    private final KafkaShareConsumer<byte[], byte[]> consumer;

    private ClientIdClaim(KafkaShareConsumer<byte[], byte[]> consumer) {
        this.consumer = consumer;
    }

    /**
     * @throws InvalidClientIDException if another connection holds the id
     */
    public static ClientIdClaim claim(ConnectionSettings settings, Admin admin, Destinations destinations,
                                      String connectionId, String clientId) throws JMSException {
        String group = "millrace.client-id." + clientId;
        destinations.ensureInternal(TOPIC);
        if (!members(admin, group, settings).isEmpty()) {
            throw new InvalidClientIDException("client id '" + clientId + "' is in use by another connection");
        }
        KafkaShareConsumer<byte[], byte[]> consumer = KafkaClients.shareConsumer(settings, connectionId, group, 1);
        boolean held = false;
        try {
            Collection<ShareMemberDescription> members = join(consumer, settings, admin, connectionId, group);
            if (members.size() > 1) {
                throw new InvalidClientIDException("client id '" + clientId + "' is in use by another connection");
            }
            held = true;
            return new ClientIdClaim(consumer);
        } finally {
            if (!held) {
                consumer.close(Duration.ofSeconds(5));
            }
        }
    }

    /**
     * Joins {@code group} (subscribed to {@value #TOPIC}) without a claim on exclusivity: the membership tells others
     * that the connection is alive, until it closes or its share session times out.
     */
    public static ClientIdClaim hold(ConnectionSettings settings, Admin admin, Destinations destinations,
                                     String connectionId, String group) throws JMSException {
        destinations.ensureInternal(TOPIC);
        KafkaShareConsumer<byte[], byte[]> consumer = KafkaClients.shareConsumer(settings, connectionId, group, 1);
        boolean held = false;
        try {
            join(consumer, settings, admin, connectionId, group);
            held = true;
            return new ClientIdClaim(consumer);
        } finally {
            if (!held) {
                consumer.close(Duration.ofSeconds(5));
            }
        }
    }

    /** Subscribes and polls until the group lists this connection; returns the members then listed. */
    private static Collection<ShareMemberDescription> join(KafkaShareConsumer<byte[], byte[]> consumer,
                                                           ConnectionSettings settings, Admin admin,
                                                           String connectionId, String group) throws JMSException {
        consumer.subscribe(List.of(TOPIC));
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.requestTimeoutMs());
        Collection<ShareMemberDescription> members = List.of();
        while (System.nanoTime() < deadline) {
            consumer.poll(Duration.ofMillis(50));
            members = members(admin, group, settings);
            if (members.stream().anyMatch(m -> m.clientId().equals(connectionId))) {
                return members;
            }
        }
        throw new JMSException("could not join group " + group + ": it did not list this connection within "
                + settings.requestTimeoutMs() + " ms");
    }

    static Collection<ShareMemberDescription> members(Admin admin, String group, ConnectionSettings settings)
            throws JMSException {
        try {
            ShareGroupDescription d = admin.describeShareGroups(List.of(group)).describedGroups().get(group)
                    .get(settings.requestTimeoutMs(), TimeUnit.MILLISECONDS);
            return d.members();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return List.of();
            }
            throw JmsExceptions.fromClient("describe share group " + group, e);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("describe share group " + group, e);
        }
    }

    /** Keeps the membership: the client leaves a group whose member stops polling. */
    public void keepAlive() {
        consumer.poll(Duration.ZERO);
    }

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(5));
    }
}
