package dev.millrace.ra.inbound;

import java.util.UUID;

import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.Topic;

/**
 * How each session of an activation consumes its destination, decided once per activation:
 *
 * <pre>
 *   destination    durability   maxSession / clientId      consumer of each session
 *   Queue          -            any                        createConsumer(queue, selector)  (share group: each
 *                                                            message goes to one session)
 *   Topic          Durable      maxSession=1 and clientId   createDurableConsumer(topic, subscriptionName, ...)
 *   Topic          Durable      otherwise                  createSharedDurableConsumer(topic, subscriptionName, ...)
 *   Topic          NonDurable   subscriptionName set or    createSharedConsumer(topic, name, selector) (one copy
 *                               maxSession > 1               per activation, spread over its sessions; the name
 *                                                            made up per activation when not given)
 *   Topic          NonDurable   maxSession=1, no name      createConsumer(topic, selector)
 * </pre>
 *
 * <p>Immutable.
 */
final class Subscription {

    private enum Kind { QUEUE, DURABLE, SHARED_DURABLE, SHARED, PLAIN }

    private final Kind kind;
    private final Destination destination;
    private final String name;
    private final String selector;

    private Subscription(Kind kind, Destination destination, String name, String selector) {
        this.kind = kind;
        this.destination = destination;
        this.name = name;
        this.selector = MillraceActivationSpec.isBlank(selector) ? null : selector;
    }

    static Subscription of(MillraceActivationSpec spec, Destination destination) {
        String selector = spec.getMessageSelector();
        if (destination instanceof Queue) {
            return new Subscription(Kind.QUEUE, destination, null, selector);
        }
        String name = spec.getSubscriptionName();
        boolean single = spec.getMaxSession() == 1;
        if (spec.isDurable()) {
            Kind kind = single && !MillraceActivationSpec.isBlank(spec.getClientId()) ? Kind.DURABLE
                    : Kind.SHARED_DURABLE;
            return new Subscription(kind, destination, name, selector);
        }
        if (!MillraceActivationSpec.isBlank(name) || !single) {
            String shared = MillraceActivationSpec.isBlank(name) ? "millrace-mdb-" + UUID.randomUUID() : name;
            return new Subscription(Kind.SHARED, destination, shared, selector);
        }
        return new Subscription(Kind.PLAIN, destination, null, selector);
    }

    /** This subscription's consumer on {@code session}. */
    MessageConsumer consumer(Session session) throws JMSException {
        return switch (kind) {
            case QUEUE, PLAIN -> session.createConsumer(destination, selector);
            case DURABLE -> session.createDurableConsumer((Topic) destination, name, selector, false);
            case SHARED_DURABLE -> session.createSharedDurableConsumer((Topic) destination, name, selector);
            case SHARED -> session.createSharedConsumer((Topic) destination, name, selector);
        };
    }

    @Override
    public String toString() {
        return kind + " " + destination + (name != null ? " subscription " + name : "")
                + (selector != null ? " selector " + selector : "");
    }
}
