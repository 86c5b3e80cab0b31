package dev.millrace.jms;

import javax.naming.Reference;
import javax.naming.Referenceable;
import javax.naming.StringRefAddr;

import dev.millrace.jms.jndi.DestinationObjectFactory;
import dev.millrace.protocol.jms.DestinationType;
import jakarta.jms.Queue;

/**
 * A queue: a topic consumed through a share group. Immutable, thread-safe, serializable, and bindable in JNDI by
 * reference ({@link DestinationObjectFactory}).
 */
public class MillraceQueue extends MillraceDestination implements Queue, Referenceable {

    private static final long serialVersionUID = 1L;

    /**
     * @throws IllegalArgumentException if the name is not a valid destination name
     */
    public MillraceQueue(String name) {
        super(name);
    }

    @Override
    public String getQueueName() {
        return getName();
    }

    @Override
    public DestinationType type() {
        return DestinationType.QUEUE;
    }

    @Override
    public Reference getReference() {
        return new Reference(MillraceQueue.class.getName(),
                new StringRefAddr(DestinationObjectFactory.NAME_ADDRESS, getName()),
                DestinationObjectFactory.class.getName(), null);
    }

    @Override
    public String toString() {
        return "queue://" + getName();
    }
}
