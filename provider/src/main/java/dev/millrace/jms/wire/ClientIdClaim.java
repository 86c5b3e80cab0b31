package dev.millrace.jms.wire;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.wire.net.ClientEventLoops;
import dev.millrace.jms.wire.share.ShareMembership;
import dev.millrace.jms.JmsExceptions;
import jakarta.jms.InvalidClientIDException;
import jakarta.jms.JMSException;

/**
 * A connection's hold on its client id across the whole broker cluster: membership of the share group
 * {@code millrace.client-id.<clientId>} (subscribed to the internal, empty topic {@value #TOPIC}).
 *
 * <pre>
 * claim:   group has members?  -> InvalidClientIDException
 *          join ({@link ShareMembership}: client.id = connection id), wait until the group lists us
 *          anyone else joined meanwhile?  -> leave, InvalidClientIDException (both racers may lose; never both win)
 * hold:    the membership heartbeats on the shared client event loop (no thread of its own)
 * release: close leaves the group; a crashed holder is dropped after the broker's share session timeout
 * </pre>
 *
 * <p>Share groups are used because a member is listed as soon as its first heartbeat arrives, without the rebalance
 * delay of classic consumer groups. Thread-safe.
 */
public final class ClientIdClaim implements AutoCloseable {

    /** The internal topic the claim groups subscribe to; nothing is written to it. */
    public static final String TOPIC = "__millrace_client_ids";

    private final ShareMembership membership;

    private ClientIdClaim(ShareMembership membership) {
        this.membership = membership;
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
        ShareMembership membership = join(settings, connectionId, group);
        boolean held = false;
        try {
            Collection<ShareMemberDescription> members = awaitListed(settings, admin, connectionId, group);
            if (members.size() > 1) {
                throw new InvalidClientIDException("client id '" + clientId + "' is in use by another connection");
            }
            held = true;
            return new ClientIdClaim(membership);
        } finally {
            if (!held) {
                membership.close();
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
        ShareMembership membership = join(settings, connectionId, group);
        boolean held = false;
        try {
            awaitListed(settings, admin, connectionId, group);
            held = true;
            return new ClientIdClaim(membership);
        } finally {
            if (!held) {
                membership.close();
            }
        }
    }

    private static ShareMembership join(ConnectionSettings settings, String connectionId, String group)
            throws JMSException {
        ShareMembership membership = new ShareMembership(settings, ClientEventLoops.next(), connectionId, group, TOPIC,
                null, new ShareMembership.Listener() { });
        try {
            membership.join().get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            membership.close();
            throw JmsExceptions.fromClient("join group " + group, e);
        } catch (ExecutionException e) {
            membership.close();
            throw JmsExceptions.fromClient("join group " + group, e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            membership.close();
            throw JmsExceptions.fromClient("join group " + group + ": no answer within "
                    + settings.requestTimeoutMs() + " ms", e);
        }
        return membership;
    }

    /** Waits until the group lists this connection; returns the members then listed. */
    private static Collection<ShareMemberDescription> awaitListed(ConnectionSettings settings, Admin admin,
                                                                  String connectionId, String group)
            throws JMSException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.requestTimeoutMs());
        Collection<ShareMemberDescription> members = List.of();
        while (System.nanoTime() < deadline) {
            members = members(admin, group, settings);
            if (members.stream().anyMatch(m -> m.clientId().equals(connectionId))) {
                return members;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        throw new JMSException("could not join group " + group + ": it did not list this connection within "
                + settings.requestTimeoutMs() + " ms");
    }

    static Collection<ShareMemberDescription> members(Admin admin, String group, ConnectionSettings settings)
            throws JMSException {
        try {
            ShareGroupDescription d = admin.describeShareGroups(List.of(group)).describedGroups().get(group)
                    .get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
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

    /** Nothing to do: the membership heartbeats by itself. Kept for callers that check a claim each interval. */
    public void keepAlive() {
        Throwable failure = membership.failure();
        if (failure != null) {
            throw new org.apache.kafka.common.KafkaException("client id membership of " + membership.groupId()
                    + " is failing: " + failure.getMessage(), failure);
        }
    }

    @Override
    public void close() {
        membership.close();
    }
}
