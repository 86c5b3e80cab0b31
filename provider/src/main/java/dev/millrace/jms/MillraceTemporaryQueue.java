package dev.millrace.jms;

import dev.millrace.protocol.jms.DestinationType;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSException;
import jakarta.jms.TemporaryQueue;

/**
 * A temporary queue, living as long as the connection that created it. {@link #delete()} goes to that connection
 * (its {@link TemporaryDestinationOwner}); a temporary queue read from a message's JMSReplyTo, or deserialized, has
 * no owner here and cannot be deleted. Equality is by name only: the owner is not part of it.
 *
 * <p>Thread-safe.
 */
public class MillraceTemporaryQueue extends MillraceDestination implements TemporaryQueue {

    private static final long serialVersionUID = 1L;

    private final transient TemporaryDestinationOwner owner;

    /**
     * @param owner the creating connection, or {@code null} when this instance only names the queue
     * @throws IllegalArgumentException if the name is not a valid destination name
     */
    public MillraceTemporaryQueue(String name, TemporaryDestinationOwner owner) {
        super(name);
        this.owner = owner;
    }

    @Override
    public String getQueueName() {
        return getName();
    }

    @Override
    public DestinationType type() {
        return DestinationType.TEMPORARY_QUEUE;
    }

    @Override
    public void delete() throws JMSException {
        if (owner == null) {
            throw new IllegalStateException("temporary queue " + getName()
                    + " can only be deleted through the connection that created it");
        }
        owner.deleteTemporaryDestination(this);
    }

    @Override
    public String toString() {
        return "temp-queue://" + getName();
    }
}
