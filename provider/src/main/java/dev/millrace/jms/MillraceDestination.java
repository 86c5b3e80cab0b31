package dev.millrace.jms;

import java.io.Serializable;

import dev.millrace.protocol.jms.DestinationType;
import dev.millrace.protocol.jms.JmsDestination;
import jakarta.jms.Destination;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;
import jakarta.jms.Queue;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TemporaryTopic;
import jakarta.jms.Topic;

/**
 * Base of Millrace's destinations. Each destination is the Kafka topic of the same name, so names follow Kafka's topic
 * rules (see {@link JmsDestination}): 1 to 249 characters from {@code [A-Za-z0-9._-]}, not {@code .} or {@code ..}.
 *
 * <p>Two destinations are equal when they are of the same class and have the same name. Instances are immutable and
 * thread-safe.
 */
public abstract class MillraceDestination implements Destination, Serializable {

    private static final long serialVersionUID = 1L;

    private final String name;

    /**
     * @throws IllegalArgumentException if the name is not a valid destination name; the message says why
     */
    protected MillraceDestination(String name) {
        String problem = JmsDestination.invalidNameReason(name);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        this.name = name;
    }

    /**
     * Checks a name before creating a destination, for session methods that must throw the JMS exception type.
     *
     * @throws InvalidDestinationException if the name is not a valid destination name; the message says why
     */
    public static void validateName(String name) throws InvalidDestinationException {
        String problem = JmsDestination.invalidNameReason(name);
        if (problem != null) {
            throw new InvalidDestinationException(problem);
        }
    }

    /** The destination (and Kafka topic) name. */
    public String getName() {
        return name;
    }

    public abstract DestinationType type();

    /** This destination in the record mapping's encoding. */
    public JmsDestination toWire() {
        return new JmsDestination(type(), name);
    }

    /**
     * The destination a record names. A temporary destination read from a record is not bound to this connection,
     * so {@code delete()} on it fails.
     */
    public static MillraceDestination fromWire(JmsDestination destination) {
        if (destination == null) {
            return null;
        }
        switch (destination.type()) {
            case QUEUE:
                return new MillraceQueue(destination.name());
            case TOPIC:
                return new MillraceTopic(destination.name());
            case TEMPORARY_QUEUE:
                return new MillraceTemporaryQueue(destination.name(), null);
            default:
                return new MillraceTemporaryTopic(destination.name(), null);
        }
    }

    /**
     * Converts any provider's destination to a Millrace one by its name, keeping queue/topic and temporary-ness.
     *
     * @throws InvalidDestinationException if it is neither a Queue nor a Topic, or its name is not valid here
     */
    public static MillraceDestination from(Destination destination) throws JMSException {
        if (destination == null || destination instanceof MillraceDestination) {
            return (MillraceDestination) destination;
        }
        try {
            if (destination instanceof TemporaryQueue) {
                return new MillraceTemporaryQueue(((Queue) destination).getQueueName(), null);
            }
            if (destination instanceof Queue) {
                return new MillraceQueue(((Queue) destination).getQueueName());
            }
            if (destination instanceof TemporaryTopic) {
                return new MillraceTemporaryTopic(((Topic) destination).getTopicName(), null);
            }
            if (destination instanceof Topic) {
                return new MillraceTopic(((Topic) destination).getTopicName());
            }
        } catch (IllegalArgumentException e) {
            InvalidDestinationException ide = new InvalidDestinationException(e.getMessage());
            ide.initCause(e);
            throw ide;
        }
        throw new InvalidDestinationException("destination " + destination + " of " + destination.getClass().getName()
                + " is neither a Queue nor a Topic");
    }

    @Override
    public boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && ((MillraceDestination) o).name.equals(name);
    }

    @Override
    public int hashCode() {
        return getClass().hashCode() * 31 + name.hashCode();
    }
}
