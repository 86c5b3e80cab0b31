package dev.millrace.jms;

import javax.naming.Reference;
import javax.naming.Referenceable;
import javax.naming.StringRefAddr;

import dev.millrace.jms.jndi.DestinationObjectFactory;
import dev.millrace.protocol.jms.DestinationType;
import jakarta.jms.Topic;

/**
 * A topic: a Kafka topic consumed through consumer groups (or share groups for shared subscriptions). Immutable,
 * thread-safe, serializable, and bindable in JNDI by reference ({@link DestinationObjectFactory}).
 */
public class MillraceTopic extends MillraceDestination implements Topic, Referenceable {

    private static final long serialVersionUID = 1L;

    /**
     * @throws IllegalArgumentException if the name is not a valid destination name
     */
    public MillraceTopic(String name) {
        super(name);
    }

    @Override
    public String getTopicName() {
        return getName();
    }

    @Override
    public DestinationType type() {
        return DestinationType.TOPIC;
    }

    @Override
    public Reference getReference() {
        return new Reference(MillraceTopic.class.getName(),
                new StringRefAddr(DestinationObjectFactory.NAME_ADDRESS, getName()),
                DestinationObjectFactory.class.getName(), null);
    }

    @Override
    public String toString() {
        return "topic://" + getName();
    }
}
