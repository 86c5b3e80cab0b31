package dev.millrace.ra.outbound;

import java.io.PrintWriter;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import javax.security.auth.Subject;

import dev.millrace.jms.MillraceXAConnectionFactory;
import dev.millrace.ra.MillraceResourceAdapter;
import jakarta.resource.ResourceException;
import jakarta.resource.spi.ConnectionManager;
import jakarta.resource.spi.ConnectionRequestInfo;
import jakarta.resource.spi.ManagedConnection;
import jakarta.resource.spi.ManagedConnectionFactory;
import jakarta.resource.spi.ResourceAdapter;
import jakarta.resource.spi.ResourceAdapterAssociation;
import jakarta.resource.spi.TransactionSupport;

/**
 * The outbound side's configuration and the factory of its physical connections: one instance per connection
 * factory an administrator defines (in {@code ironjacamar.xml}, the server's configuration or
 * {@code @ConnectionFactoryDefinition}).
 *
 * <p>Its JavaBean properties are exactly the options of the provider's {@code MillraceConnectionFactory} (documented
 * in {@code provider/README.md}), held in a {@link MillraceXAConnectionFactory} that it owns and that checks every
 * value as it is set (an {@code IllegalArgumentException} naming the option). That factory makes the XA connection of
 * every {@link MillraceManagedConnection}.
 *
 * <pre>
 *   MillraceManagedConnectionFactory --owns--> MillraceXAConnectionFactory (settings)
 *        | createConnectionFactory(cm)              | createXAConnection(user, password)
 *        v                                          v
 *   MillraceConnectionFactoryHandle       MillraceManagedConnection (pooled by the container)
 *   (what the application looks up)
 * </pre>
 *
 * <p>A factory whose {@code brokers} is not set uses its resource adapter's ({@code MillraceResourceAdapter}), so a
 * connection factory defined with {@code @JMSConnectionFactoryDefinition(resourceAdapter = "millrace-ra")} and no
 * properties reaches the brokers the server's adapter (or its {@code millrace.brokers} system property) names.
 *
 * <p>Equal to another instance with the same options (the container keeps separate pools for unequal ones).
 * Configured by the container before use, then thread-safe.
 */
public class MillraceManagedConnectionFactory implements ManagedConnectionFactory, ResourceAdapterAssociation,
        TransactionSupport {

    private static final long serialVersionUID = 1L;

    private final MillraceXAConnectionFactory settings = new MillraceXAConnectionFactory();
    private transient ResourceAdapter resourceAdapter;
    private transient PrintWriter logWriter;
    private boolean brokersSet;

    @Override
    public Object createConnectionFactory(ConnectionManager manager) throws ResourceException {
        return new MillraceConnectionFactoryHandle(this, manager);
    }

    /** Outside a container: connections are made directly, without pooling or transactions. */
    @Override
    public Object createConnectionFactory() throws ResourceException {
        return new MillraceConnectionFactoryHandle(this, new UnpooledConnectionManager());
    }

    @Override
    public ManagedConnection createManagedConnection(Subject subject, ConnectionRequestInfo info)
            throws ResourceException {
        return MillraceManagedConnection.open(this, Credentials.of(settings, info));
    }

    /** The first of {@code candidates} made by an equal factory for the same credentials, or null. */
    @Override
    @SuppressWarnings("rawtypes")
    public ManagedConnection matchManagedConnections(Set candidates, Subject subject, ConnectionRequestInfo info)
            throws ResourceException {
        Credentials wanted = Credentials.of(settings, info);
        for (Object candidate : candidates) {
            if (candidate instanceof MillraceManagedConnection mc && mc.factory().equals(this)
                    && mc.credentials().equals(wanted) && mc.isUsable()) {
                return mc;
            }
        }
        return null;
    }

    /** XA: the container may also run a local transaction over it ({@link ManagedLocalTransaction}). */
    @Override
    public TransactionSupportLevel getTransactionSupport() {
        return TransactionSupportLevel.XATransaction;
    }

    /** The provider factory holding these options; makes the physical connections. */
    MillraceXAConnectionFactory settings() {
        return settings;
    }

    @Override
    public ResourceAdapter getResourceAdapter() {
        return resourceAdapter;
    }

    /**
     * Associates the adapter; a factory whose {@code brokers} was not set takes the adapter's (whichever the
     * container calls first: a {@code brokers} set later wins).
     */
    @Override
    public void setResourceAdapter(ResourceAdapter resourceAdapter) {
        this.resourceAdapter = resourceAdapter;
        if (!brokersSet && resourceAdapter instanceof MillraceResourceAdapter ra && ra.getBrokers() != null) {
            settings.setBrokers(ra.getBrokers());
        }
    }

    @Override
    public void setLogWriter(PrintWriter out) {
        this.logWriter = out;
    }

    @Override
    public PrintWriter getLogWriter() {
        return logWriter;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MillraceManagedConnectionFactory other
                && settings.getProperties().equals(other.settings.getProperties());
    }

    @Override
    public int hashCode() {
        return Objects.hash(settings.getProperties());
    }

    @Override
    public String toString() {
        return "MillraceManagedConnectionFactory" + settings.toString().substring("MillraceXAConnectionFactory".length());
    }

    /** Every option that is set, as {@code MillraceConnectionFactory.getProperties} (a copy). */
    Map<String, String> options() {
        return settings.getProperties();
    }

    // ---- the provider's options, one JavaBean property each (wrapper types, as Jakarta Connectors requires)

    public String getBrokers() {
        return settings.getBrokers();
    }

    public void setBrokers(String brokers) {
        settings.setBrokers(brokers);
        brokersSet = true;
    }

    public String getClientId() {
        return settings.getClientId();
    }

    public void setClientId(String clientId) {
        settings.setClientId(clientId);
    }

    public String getUser() {
        return settings.getUser();
    }

    public void setUser(String user) {
        settings.setUser(user);
    }

    public String getPassword() {
        return settings.getPassword();
    }

    public void setPassword(String password) {
        settings.setPassword(password);
    }

    public String getPersistentAcks() {
        return settings.getPersistentAcks();
    }

    public void setPersistentAcks(String persistentAcks) {
        settings.setPersistentAcks(persistentAcks);
    }

    public String getNonPersistentAcks() {
        return settings.getNonPersistentAcks();
    }

    public void setNonPersistentAcks(String nonPersistentAcks) {
        settings.setNonPersistentAcks(nonPersistentAcks);
    }

    public Integer getLingerMs() {
        return settings.getLingerMs();
    }

    public void setLingerMs(Integer lingerMs) {
        settings.setLingerMs(lingerMs);
    }

    public Integer getBatchSizeBytes() {
        return settings.getBatchSizeBytes();
    }

    public void setBatchSizeBytes(Integer batchSizeBytes) {
        settings.setBatchSizeBytes(batchSizeBytes);
    }

    public Integer getPrefetch() {
        return settings.getPrefetch();
    }

    public void setPrefetch(Integer prefetch) {
        settings.setPrefetch(prefetch);
    }

    public Integer getPrefetchBytes() {
        return settings.getPrefetchBytes();
    }

    public void setPrefetchBytes(Integer prefetchBytes) {
        settings.setPrefetchBytes(prefetchBytes);
    }

    public Integer getPrefetchIdleReleaseMs() {
        return settings.getPrefetchIdleReleaseMs();
    }

    public void setPrefetchIdleReleaseMs(Integer prefetchIdleReleaseMs) {
        settings.setPrefetchIdleReleaseMs(prefetchIdleReleaseMs);
    }

    public Integer getRequestTimeoutMs() {
        return settings.getRequestTimeoutMs();
    }

    public void setRequestTimeoutMs(Integer requestTimeoutMs) {
        settings.setRequestTimeoutMs(requestTimeoutMs);
    }

    public Integer getConnectionCheckIntervalMs() {
        return settings.getConnectionCheckIntervalMs();
    }

    public void setConnectionCheckIntervalMs(Integer connectionCheckIntervalMs) {
        settings.setConnectionCheckIntervalMs(connectionCheckIntervalMs);
    }

    public Integer getFailoverTimeoutMs() {
        return settings.getFailoverTimeoutMs();
    }

    public void setFailoverTimeoutMs(Integer failoverTimeoutMs) {
        settings.setFailoverTimeoutMs(failoverTimeoutMs);
    }

    public Integer getTransactionTimeoutMs() {
        return settings.getTransactionTimeoutMs();
    }

    public void setTransactionTimeoutMs(Integer transactionTimeoutMs) {
        settings.setTransactionTimeoutMs(transactionTimeoutMs);
    }

    public Boolean isAutoCreateDestinations() {
        return settings.isAutoCreateDestinations();
    }

    public void setAutoCreateDestinations(Boolean autoCreateDestinations) {
        settings.setAutoCreateDestinations(autoCreateDestinations);
    }

    public Integer getDestinationPartitions() {
        return settings.getDestinationPartitions();
    }

    public void setDestinationPartitions(Integer destinationPartitions) {
        settings.setDestinationPartitions(destinationPartitions);
    }

    public Short getDestinationReplicationFactor() {
        return settings.getDestinationReplicationFactor();
    }

    public void setDestinationReplicationFactor(Short destinationReplicationFactor) {
        settings.setDestinationReplicationFactor(destinationReplicationFactor);
    }

    public Integer getMaxDeliveries() {
        return settings.getMaxDeliveries();
    }

    public void setMaxDeliveries(Integer maxDeliveries) {
        settings.setMaxDeliveries(maxDeliveries);
    }

    public Long getRedeliveryDelayMs() {
        return settings.getRedeliveryDelayMs();
    }

    public void setRedeliveryDelayMs(Long redeliveryDelayMs) {
        settings.setRedeliveryDelayMs(redeliveryDelayMs);
    }

    public Long getMaxRedeliveryDelayMs() {
        return settings.getMaxRedeliveryDelayMs();
    }

    public void setMaxRedeliveryDelayMs(Long maxRedeliveryDelayMs) {
        settings.setMaxRedeliveryDelayMs(maxRedeliveryDelayMs);
    }

    public String getDeadLetterQueuePattern() {
        return settings.getDeadLetterQueuePattern();
    }

    public void setDeadLetterQueuePattern(String deadLetterQueuePattern) {
        settings.setDeadLetterQueuePattern(deadLetterQueuePattern);
    }

    public String getExpiryQueuePattern() {
        return settings.getExpiryQueuePattern();
    }

    public void setExpiryQueuePattern(String expiryQueuePattern) {
        settings.setExpiryQueuePattern(expiryQueuePattern);
    }

    public String getDestinationPolicies() {
        return settings.getDestinationPolicies();
    }

    public void setDestinationPolicies(String destinationPolicies) {
        settings.setDestinationPolicies(destinationPolicies);
    }

    public Boolean isManageDestinationPolicies() {
        return settings.isManageDestinationPolicies();
    }

    public void setManageDestinationPolicies(Boolean manageDestinationPolicies) {
        settings.setManageDestinationPolicies(manageDestinationPolicies);
    }

    public Boolean isBlockOnAcknowledge() {
        return settings.isBlockOnAcknowledge();
    }

    public void setBlockOnAcknowledge(Boolean blockOnAcknowledge) {
        settings.setBlockOnAcknowledge(blockOnAcknowledge);
    }
}
