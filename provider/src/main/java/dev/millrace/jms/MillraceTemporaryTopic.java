package dev.millrace.jms;

import dev.millrace.protocol.jms.DestinationType;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSException;
import jakarta.jms.TemporaryTopic;

/**
 * A temporary topic, living as long as the connection that created it. {@link #delete()} goes to that connection
 * (its {@link TemporaryDestinationOwner}); a temporary topic read from a message's JMSReplyTo, or deserialized, has
 * no owner here and cannot be deleted. Equality is by name only: the owner is not part of it.
 *
 * <p>Thread-safe.
 */
public class MillraceTemporaryTopic extends MillraceDestination implements TemporaryTopic {

    private static final long serialVersionUID = 1L;

    private final transient TemporaryDestinationOwner owner;

    /**
     * @param owner the creating connection, or {@code null} when this instance only names the topic
     * @throws IllegalArgumentException if the name is not a valid destination name
     */
    public MillraceTemporaryTopic(String name, TemporaryDestinationOwner owner) {
        super(name);
        this.owner = owner;
    }

    @Override
    public String getTopicName() {
        return getName();
    }

    @Override
    public DestinationType type() {
        return DestinationType.TEMPORARY_TOPIC;
    }

    @Override
    public void delete() throws JMSException {
        if (owner == null) {
            throw new IllegalStateException("temporary topic " + getName()
                    + " can only be deleted through the connection that created it");
        }
        owner.deleteTemporaryDestination(this);
    }

    @Override
    public String toString() {
        return "temp-topic://" + getName();
    }
}
