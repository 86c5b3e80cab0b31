package dev.millrace.ra;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import javax.transaction.xa.XAResource;

import dev.millrace.jms.MillraceXAConnectionFactory;
import dev.millrace.ra.inbound.EndpointActivation;
import dev.millrace.ra.inbound.MillraceActivationSpec;
import jakarta.jms.JMSException;
import jakarta.jms.XAConnection;
import jakarta.resource.NotSupportedException;
import jakarta.resource.ResourceException;
import jakarta.resource.spi.ActivationSpec;
import jakarta.resource.spi.BootstrapContext;
import jakarta.resource.spi.ResourceAdapter;
import jakarta.resource.spi.ResourceAdapterInternalException;
import jakarta.resource.spi.endpoint.MessageEndpointFactory;
import jakarta.resource.spi.work.WorkManager;

/**
 * The Millrace resource adapter: one per deployed .rar. It holds the container's WorkManager, the active
 * message-driven beans ({@link EndpointActivation}, one per {@code endpointActivation}) and the connections its
 * transaction manager recovers with.
 *
 * <p>Its one property, {@code brokers}, is the default bootstrap list of activations and of outbound connection
 * factories that set none. Unset (ra.xml gives it no value), it is the JVM's system property
 * {@value #BROKERS_PROPERTY}, else {@code localhost:9092}: one {@code -Dmillrace.brokers=h1:9092,h2:9092} on the
 * server's command line points every adapter instance at the cluster, including the ones a container makes for
 * {@code @JMSConnectionFactoryDefinition} and {@code @ConnectionFactoryDefinition} (WildFly starts a new instance
 * for each, configured by ra.xml alone). The shipped {@code ironjacamar.xml} sets it from the same property;
 * GlassFish's {@code create-resource-adapter-config} sets it explicitly.
 *
 * <p>Recovery: {@link #getXAResources} returns, for each distinct set of connection options of the given
 * activations (brokers, credentials, transport: as their deliveries' connections have them, a
 * {@code connectionFactoryLookup} included, {@link EndpointActivation#recoveryOptions}), the XAResource of an XA
 * session kept open for it until {@link #stop()}; its {@code recover} lists every prepared branch of that cluster.
 *
 * <p>Thread-safe.
 */
public class MillraceResourceAdapter implements ResourceAdapter {

    /** The system property that gives {@code brokers} when the container sets none. */
    public static final String BROKERS_PROPERTY = "millrace.brokers";

    private String brokers = System.getProperty(BROKERS_PROPERTY, "localhost:9092");
    private volatile WorkManager workManager;
    private final Map<ActivationKey, EndpointActivation> activations = new ConcurrentHashMap<>();
    /** Recovery connections by their connection options (brokers, credentials, transport). */
    private final Map<Map<String, String>, XAConnection> recoveryConnections = new ConcurrentHashMap<>();

    public String getBrokers() {
        return brokers;
    }

    public void setBrokers(String brokers) {
        this.brokers = brokers;
    }

    @Override
    public void start(BootstrapContext context) throws ResourceAdapterInternalException {
        try {
            new MillraceXAConnectionFactory(brokers);
        } catch (IllegalArgumentException e) {
            throw new ResourceAdapterInternalException("brokers: " + e.getMessage(), e);
        }
        this.workManager = context.getWorkManager();
    }

    @Override
    public void stop() {
        for (ActivationKey key : List.copyOf(activations.keySet())) {
            EndpointActivation a = activations.remove(key);
            if (a != null) {
                a.stop();
            }
        }
        for (XAConnection c : recoveryConnections.values()) {
            try {
                c.close();
            } catch (JMSException ignored) {
                // stopping: nothing left to do with it
            }
        }
        recoveryConnections.clear();
    }

    @Override
    public void endpointActivation(MessageEndpointFactory endpointFactory, ActivationSpec spec)
            throws ResourceException {
        MillraceActivationSpec s = millrace(spec);
        EndpointActivation activation = EndpointActivation.start(endpointFactory, s, brokers, workManager);
        EndpointActivation previous = activations.put(new ActivationKey(endpointFactory, s), activation);
        if (previous != null) {
            previous.stop();
        }
    }

    @Override
    public void endpointDeactivation(MessageEndpointFactory endpointFactory, ActivationSpec spec) {
        EndpointActivation activation = activations.remove(new ActivationKey(endpointFactory, spec));
        if (activation != null) {
            activation.stop();
        }
    }

    @Override
    public XAResource[] getXAResources(ActivationSpec[] specs) throws ResourceException {
        List<XAResource> resources = new ArrayList<>();
        for (ActivationSpec spec : specs) {
            MillraceActivationSpec s = millrace(spec);
            Map<String, String> options = EndpointActivation.recoveryOptions(s, brokers);
            try {
                XAConnection c = recoveryConnections.computeIfAbsent(options, this::openRecoveryConnection);
                resources.add(c.createXASession().getXAResource());
            } catch (JMSException | IllegalStateException e) {
                throw new ResourceAdapterInternalException("no recovery connection to " + options.get("brokers")
                        + ": " + e.getMessage(), e);
            }
        }
        return resources.toArray(new XAResource[0]);
    }

    private XAConnection openRecoveryConnection(Map<String, String> options) {
        try {
            MillraceXAConnectionFactory factory = new MillraceXAConnectionFactory();
            factory.setProperties(options);
            return factory.createXAConnection();
        } catch (JMSException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private static MillraceActivationSpec millrace(ActivationSpec spec) throws NotSupportedException {
        if (!(spec instanceof MillraceActivationSpec s)) {
            throw new NotSupportedException("not a Millrace activation spec: " + spec);
        }
        return s;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MillraceResourceAdapter other && Objects.equals(brokers, other.brokers);
    }

    @Override
    public int hashCode() {
        return Objects.hashCode(brokers);
    }

    /** An activation is identified by its endpoint factory and spec, by identity (JCA 13.4.4). */
    private record ActivationKey(MessageEndpointFactory factory, ActivationSpec spec) {

        @Override
        public boolean equals(Object o) {
            return o instanceof ActivationKey k && k.factory == factory && k.spec == spec;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(factory) * 31 + System.identityHashCode(spec);
        }
    }
}
