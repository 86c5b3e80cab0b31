package dev.millrace.ra.admin;

import jakarta.jms.InvalidDestinationException;
import jakarta.jms.Queue;

/**
 * A queue as an administered object of the resource adapter: bound in JNDI by the container, e.g.
 * {@code @Resource(lookup = "java:/jms/millrace/queue/orders") Queue orders}, or named by an MDB's
 * {@code destinationLookup}. Its one property, {@code name}, is the queue's Millrace name. See
 * {@link AdminDestination} for equality, serialization and threading.
 */
public class MillraceQueueAdminObject extends AdminDestination implements Queue {

    private static final long serialVersionUID = 1L;

    /**
     * @throws InvalidDestinationException if the container never set {@code name}
     */
    @Override
    public String getQueueName() throws InvalidDestinationException {
        return requireName();
    }

    @Override
    String kind() {
        return "queue";
    }
}
