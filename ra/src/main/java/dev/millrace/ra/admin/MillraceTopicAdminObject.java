package dev.millrace.ra.admin;

import jakarta.jms.InvalidDestinationException;
import jakarta.jms.Topic;

/**
 * A topic as an administered object of the resource adapter: bound in JNDI by the container, e.g.
 * {@code @Resource(lookup = "java:/jms/millrace/topic/prices") Topic prices}, or named by an MDB's
 * {@code destinationLookup}. Its one property, {@code name}, is the topic's Millrace name. See
 * {@link AdminDestination} for equality, serialization and threading.
 */
public class MillraceTopicAdminObject extends AdminDestination implements Topic {

    private static final long serialVersionUID = 1L;

    /**
     * @throws InvalidDestinationException if the container never set {@code name}
     */
    @Override
    public String getTopicName() throws InvalidDestinationException {
        return requireName();
    }

    @Override
    String kind() {
        return "topic";
    }
}
