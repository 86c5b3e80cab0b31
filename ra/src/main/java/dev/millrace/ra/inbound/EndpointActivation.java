package dev.millrace.ra.inbound;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.naming.InitialContext;
import javax.naming.NamingException;

import dev.millrace.jms.MillraceConnectionFactory;
import dev.millrace.jms.MillraceDestination;
import dev.millrace.jms.MillraceQueue;
import dev.millrace.jms.MillraceTopic;
import dev.millrace.jms.MillraceXAConnectionFactory;
import dev.millrace.ra.outbound.MillraceConnectionFactoryHandle;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.jms.Queue;
import jakarta.jms.Topic;
import jakarta.resource.NotSupportedException;
import jakarta.resource.ResourceException;
import jakarta.resource.spi.InvalidPropertyException;
import jakarta.resource.spi.endpoint.MessageEndpointFactory;
import jakarta.resource.spi.work.WorkException;
import jakarta.resource.spi.work.WorkManager;

/**
 * One active message-driven bean: from {@code endpointActivation} to {@code endpointDeactivation}. It owns the
 * provider factory made from the {@link MillraceActivationSpec}, the resolved destination and {@link Subscription},
 * and {@code maxSession} {@link DeliveryWorker}s (each with its own connection, session and endpoint) running on
 * the container's WorkManager.
 *
 * <p>{@link #stop()} releases every worker and waits until each has finished its current delivery (its
 * transaction completed) and closed its connection, so a deactivated bean gets nothing more, no message is
 * left half-delivered, and its consumers leave their share groups.
 *
 * <p>Thread-safe: started and stopped by the container's threads.
 */
public final class EndpointActivation {

    static final Method ON_MESSAGE;

    static {
        try {
            ON_MESSAGE = MessageListener.class.getMethod("onMessage", Message.class);
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final MessageEndpointFactory endpointFactory;
    private final MillraceActivationSpec spec;
    private final MillraceXAConnectionFactory connectionFactory;
    private final Subscription subscription;
    private final boolean transacted;
    private final List<DeliveryWorker> workers = new ArrayList<>();

    private EndpointActivation(MessageEndpointFactory endpointFactory, MillraceActivationSpec spec,
            MillraceXAConnectionFactory connectionFactory, Subscription subscription, boolean transacted) {
        this.endpointFactory = endpointFactory;
        this.spec = spec;
        this.connectionFactory = connectionFactory;
        this.subscription = subscription;
        this.transacted = transacted;
    }

    /**
     * Checks {@code spec}, resolves its destination and starts its workers.
     *
     * @param defaultBrokers the resource adapter's brokers, for a spec without its own
     * @throws InvalidPropertyException naming what is wrong with the activation
     */
    public static EndpointActivation start(MessageEndpointFactory endpointFactory, MillraceActivationSpec spec,
            String defaultBrokers, WorkManager workManager) throws ResourceException {
        spec.validate();
        Map<String, String> base = connectionOptions(spec, EndpointActivation::lookupInitialContext);
        MillraceXAConnectionFactory factory = new MillraceXAConnectionFactory();
        try {
            factory.setProperties(spec.connectionFactory(defaultBrokers, base).getProperties());
        } catch (IllegalArgumentException e) {
            throw new InvalidPropertyException("invalid activation of " + spec + ": " + e.getMessage(), e);
        }
        boolean transacted;
        try {
            transacted = endpointFactory.isDeliveryTransacted(ON_MESSAGE);
        } catch (NoSuchMethodException e) {
            throw new NotSupportedException("the endpoint is not a jakarta.jms.MessageListener: " + endpointFactory,
                    e);
        }
        Destination destination = destination(spec, EndpointActivation::lookupInitialContext);
        EndpointActivation activation = new EndpointActivation(endpointFactory, spec, factory,
                Subscription.of(spec, destination), transacted);
        activation.startWorkers(workManager);
        return activation;
    }

    /** A JNDI lookup: {@code new InitialContext().lookup(name)} in the container, a stub in tests. */
    @FunctionalInterface
    interface Lookup {
        Object lookup(String name) throws NamingException;
    }

    private static Object lookupInitialContext(String name) throws NamingException {
        InitialContext context = new InitialContext();
        try {
            return context.lookup(name);
        } finally {
            context.close();
        }
    }

    /**
     * The options of the connection factory {@code connectionFactoryLookup} names (the adapter's
     * {@link MillraceConnectionFactoryHandle} or a provider {@link MillraceConnectionFactory}), or null without one.
     *
     * @throws InvalidPropertyException naming connectionFactoryLookup and its JNDI name when nothing is bound there
     *     or it is not a Millrace connection factory
     */
    static Map<String, String> connectionOptions(MillraceActivationSpec spec, Lookup jndi)
            throws InvalidPropertyException {
        String lookup = spec.getConnectionFactoryLookup();
        if (MillraceActivationSpec.isBlank(lookup)) {
            return null;
        }
        Object found;
        try {
            found = jndi.lookup(lookup);
        } catch (NamingException | RuntimeException e) {
            throw new InvalidPropertyException("connectionFactoryLookup: nothing bound at '" + lookup + "': " + e, e);
        }
        if (found instanceof MillraceConnectionFactoryHandle handle) {
            return handle.connectionOptions();
        }
        if (found instanceof MillraceConnectionFactory factory) {
            return factory.getProperties();
        }
        throw new InvalidPropertyException("connectionFactoryLookup: '" + lookup + "' is " + found
                + (found == null ? "" : " (" + found.getClass().getName() + ")")
                + ", not a Millrace connection factory");
    }

    /**
     * The connection options recovery uses for {@code spec}: those its activation's connections get (its own settings
     * over those of the factory {@code connectionFactoryLookup} names, the brokers its own, else that factory's, else
     * {@code defaultBrokers}), without a client id: recovery reaches the cluster the deliveries went to, with the same
     * credentials and transport. A {@code connectionFactoryLookup} that cannot be resolved here (the container's
     * recovery thread may not see the application's {@code java:app} or {@code java:comp} names) is logged and left
     * out: the activation's own settings and {@code defaultBrokers} are used, as before lookups were followed, rather
     * than failing the recovery of every activation given with it.
     *
     * @throws InvalidPropertyException as {@link #start} would for the same spec's other settings
     */
    public static Map<String, String> recoveryOptions(MillraceActivationSpec spec, String defaultBrokers)
            throws InvalidPropertyException {
        return recoveryOptions(spec, defaultBrokers, EndpointActivation::lookupInitialContext);
    }

    static Map<String, String> recoveryOptions(MillraceActivationSpec spec, String defaultBrokers, Lookup jndi)
            throws InvalidPropertyException {
        Map<String, String> base;
        try {
            base = connectionOptions(spec, jndi);
        } catch (InvalidPropertyException e) {
            System.getLogger(EndpointActivation.class.getName()).log(System.Logger.Level.WARNING,
                    "recovery of " + spec + " uses its own settings and the adapter's brokers: " + e.getMessage());
            base = null;
        }
        Map<String, String> options; // a map of its own (getProperties makes one per call)
        try {
            options = spec.connectionFactory(defaultBrokers, base).getProperties();
        } catch (IllegalArgumentException e) {
            throw new InvalidPropertyException("invalid activation of " + spec + ": " + e.getMessage(), e);
        }
        options.remove("clientId");
        return options;
    }

    /**
     * The destination of {@code spec}: {@code destination} by name, or what {@code destinationLookup} names in JNDI
     * (any provider's Queue or Topic, usually the adapter's administered objects), as a Millrace destination.
     *
     * @throws InvalidPropertyException naming destination or destinationLookup (and its JNDI name) when the name is
     *     not valid, nothing is bound there, or what is bound is not a destination of {@code destinationType}
     */
    static Destination destination(MillraceActivationSpec spec, Lookup jndi) throws ResourceException {
        if (MillraceActivationSpec.isBlank(spec.getDestinationLookup())) {
            try {
                return spec.isTopic() ? new MillraceTopic(spec.getDestination())
                        : new MillraceQueue(spec.getDestination());
            } catch (IllegalArgumentException e) {
                throw new InvalidPropertyException("destination: " + e.getMessage(), e);
            }
        }
        String lookup = spec.getDestinationLookup();
        Object found;
        try {
            found = jndi.lookup(lookup);
        } catch (NamingException | RuntimeException e) {
            throw new InvalidPropertyException("destinationLookup: nothing bound at '" + lookup + "': " + e, e);
        }
        if (spec.isTopic() ? !(found instanceof Topic) : !(found instanceof Queue)) {
            throw new InvalidPropertyException("destinationLookup: '" + lookup + "' is " + found
                    + (found == null ? "" : " (" + found.getClass().getName() + ")") + ", not a "
                    + spec.getDestinationType() + " (destinationType)");
        }
        try {
            return MillraceDestination.from((Destination) found);
        } catch (JMSException e) {
            throw new InvalidPropertyException("destinationLookup: '" + lookup + "' is not a Millrace destination: "
                    + e.getMessage(), e);
        }
    }

    private synchronized void startWorkers(WorkManager workManager) throws ResourceException {
        for (int i = 0; i < spec.getMaxSession(); i++) {
            DeliveryWorker worker = new DeliveryWorker(this, i);
            try {
                workManager.scheduleWork(worker, WorkManager.INDEFINITE, null, null);
            } catch (WorkException e) {
                stop();
                throw e;
            }
            workers.add(worker);
        }
    }

    /** Releases every worker and waits for each to end (at most its current delivery plus the close). */
    public synchronized void stop() {
        for (DeliveryWorker w : workers) {
            w.release();
        }
        long deadline = System.nanoTime() + (receiveTimeoutMs() + connectionFactory.getRequestTimeoutMs()) * 1_000_000L;
        try {
            for (DeliveryWorker w : workers) {
                long leftMs = Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
                if (!w.awaitEnd(leftMs)) {
                    System.getLogger(EndpointActivation.class.getName()).log(System.Logger.Level.WARNING,
                            w + " did not end within its deadline");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        workers.clear();
    }

    MessageEndpointFactory endpointFactory() {
        return endpointFactory;
    }

    MillraceXAConnectionFactory connectionFactory() {
        return connectionFactory;
    }

    Subscription subscription() {
        return subscription;
    }

    boolean isTransacted() {
        return transacted;
    }

    int receiveTimeoutMs() {
        return spec.getReceiveTimeoutMs();
    }

    @Override
    public String toString() {
        return "EndpointActivation[" + subscription + (transacted ? ", transacted" : "") + "]";
    }
}
