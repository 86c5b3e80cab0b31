package dev.millrace.ra.admin;

import java.io.Serializable;
import java.util.Objects;

import javax.naming.Reference;
import javax.naming.StringRefAddr;

import dev.millrace.protocol.jms.JmsDestination;
import jakarta.jms.InvalidDestinationException;
import jakarta.resource.Referenceable;

/**
 * Base of the resource adapter's administered objects ({@code <adminobject>} in {@code ra.xml}): a JavaBean with
 * one property, {@code name}, the Millrace destination (and Kafka topic) name, which the container sets from its
 * configuration ({@code ironjacamar.xml}'s or the {@code resource-adapters} subsystem's
 * {@code <config-property name="name">}) and binds in JNDI.
 *
 * <p>The provider takes any {@link jakarta.jms.Queue} or {@link jakarta.jms.Topic} by its name
 * ({@code MillraceDestination.from}), so an application hands these objects to {@code send}, {@code createConsumer}
 * and {@code setJMSReplyTo} as they are, through the adapter's connection factory or a plain provider connection.
 *
 * <p>Connectors requires administered objects to be {@link Serializable} and {@link Referenceable}: a container that
 * binds by reference calls {@link #setReference}; otherwise {@link #getReference} describes the object for
 * {@link AdminObjectFactory}. Two administered objects are equal when they are of the same class and name the same
 * destination; an administered object is never equal to a provider destination ({@code MillraceQueue}), whose equality
 * is by class too.
 *
 * <p>Configured by the container before use (not thread-safe while it is), then read-only and thread-safe.
 */
public abstract class AdminDestination implements Serializable, Referenceable {

    private static final long serialVersionUID = 1L;

    private String name;
    private Reference reference;

    /** The destination name, or null before the container set it. */
    public String getName() {
        return name;
    }

    /**
     * @throws IllegalArgumentException if {@code name} is not a valid Millrace destination name; the message names
     *     the property and says why
     */
    public void setName(String name) {
        String problem = JmsDestination.invalidNameReason(name);
        if (problem != null) {
            throw new IllegalArgumentException("name: '" + name + "' is not a destination name: " + problem);
        }
        this.name = name;
    }

    /** {@code "queue"} or {@code "topic"}, for messages and {@link #toString()}. */
    abstract String kind();

    /**
     * The name, for {@code getQueueName}/{@code getTopicName}.
     *
     * @throws InvalidDestinationException if the container never set it
     */
    String requireName() throws InvalidDestinationException {
        if (name == null) {
            throw new InvalidDestinationException(getClass().getSimpleName()
                    + " has no name: set its config-property 'name' to the " + kind() + "'s name");
        }
        return name;
    }

    @Override
    public void setReference(Reference reference) {
        this.reference = reference;
    }

    @Override
    public Reference getReference() {
        if (reference != null) {
            return reference;
        }
        return new Reference(getClass().getName(), new StringRefAddr(AdminObjectFactory.NAME_ADDRESS, name),
                AdminObjectFactory.class.getName(), null);
    }

    @Override
    public boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && Objects.equals(((AdminDestination) o).name, name);
    }

    @Override
    public int hashCode() {
        return getClass().hashCode() * 31 + Objects.hashCode(name);
    }

    @Override
    public String toString() {
        return kind() + "://" + name;
    }
}
