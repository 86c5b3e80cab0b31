package dev.millrace.jms;

import java.io.Serializable;

import dev.millrace.protocol.net.ClientSecurity;

/**
 * The options of a {@link MillraceConnectionFactory}, frozen when a connection is created, so changing the factory
 * afterwards does not affect existing connections. Every option, with its default, is listed in
 * {@code provider/README.md}.
 *
 * <p>The constructor throws IllegalArgumentException, naming the option, when options contradict each other.
 *
 * <p>Immutable and thread-safe.
 */
public final class ConnectionSettings implements Serializable {

    private static final long serialVersionUID = 1L;

    final String brokers;
    final String clientId;
    final String user;
    final String password;
    final String persistentAcks;
    final String nonPersistentAcks;
    final int lingerMs;
    final int batchSizeBytes;
    final int prefetch;
    final int prefetchBytes;
    final int prefetchIdleReleaseMs;
    final int requestTimeoutMs;
    final int connectionCheckIntervalMs;
    final int failoverTimeoutMs;
    final int transactionTimeoutMs;
    final boolean autoCreateDestinations;
    final int destinationPartitions;
    final short destinationReplicationFactor;
    final DestinationPolicies destinationPolicies;
    final boolean manageDestinationPolicies;
    final boolean blockOnAcknowledge;
    final String securityProtocol;
    final String saslMechanism;
    final java.util.Map<String, String> sslConfigs;
    /** Built from the options above; rebuilt after deserialization. */
    private transient volatile ClientSecurity security;
    /** Every setting that shapes how destinations are created and configured, as one comparable string. */
    final String destinationKey;

    ConnectionSettings(MillraceConnectionFactory f, String user, String password) {
        this.brokers = f.getBrokers();
        this.clientId = f.getClientId();
        this.user = user;
        this.password = password;
        this.persistentAcks = f.getPersistentAcks();
        this.nonPersistentAcks = f.getNonPersistentAcks();
        this.lingerMs = f.getLingerMs();
        this.batchSizeBytes = f.getBatchSizeBytes();
        this.prefetch = f.getPrefetch();
        this.prefetchBytes = f.getPrefetchBytes();
        this.prefetchIdleReleaseMs = f.getPrefetchIdleReleaseMs();
        this.requestTimeoutMs = f.getRequestTimeoutMs();
        this.connectionCheckIntervalMs = f.getConnectionCheckIntervalMs();
        this.failoverTimeoutMs = f.getFailoverTimeoutMs();
        this.transactionTimeoutMs = f.getTransactionTimeoutMs();
        this.autoCreateDestinations = f.isAutoCreateDestinations();
        this.destinationPartitions = f.getDestinationPartitions();
        this.destinationReplicationFactor = f.getDestinationReplicationFactor();
        this.destinationPolicies = new DestinationPolicies(f.getMaxDeliveries(), f.getRedeliveryDelayMs(),
                f.getMaxRedeliveryDelayMs(), f.getDeadLetterQueuePattern(), f.getExpiryQueuePattern(),
                f.getDestinationPolicies());
        this.manageDestinationPolicies = f.isManageDestinationPolicies();
        this.blockOnAcknowledge = f.isBlockOnAcknowledge();
        this.securityProtocol = f.getSecurityProtocol();
        this.saslMechanism = f.getSaslMechanism();
        java.util.Map<String, String> ssl = new java.util.HashMap<>();
        ssl.put("ssl.truststore.location", f.getSslTruststoreLocation());
        ssl.put("ssl.truststore.password", f.getSslTruststorePassword());
        ssl.put("ssl.keystore.location", f.getSslKeystoreLocation());
        ssl.put("ssl.keystore.password", f.getSslKeystorePassword());
        this.sslConfigs = java.util.Collections.unmodifiableMap(ssl);
        this.security = ClientSecurity.create(securityProtocol, saslMechanism, user, password, sslConfigs);
        this.destinationKey = String.join("|", String.valueOf(autoCreateDestinations),
                String.valueOf(destinationPartitions), String.valueOf(destinationReplicationFactor),
                String.valueOf(manageDestinationPolicies), String.valueOf(f.getMaxDeliveries()),
                String.valueOf(f.getRedeliveryDelayMs()), String.valueOf(f.getMaxRedeliveryDelayMs()),
                String.valueOf(f.getDeadLetterQueuePattern()), String.valueOf(f.getExpiryQueuePattern()),
                String.valueOf(f.getDestinationPolicies()));
    }

    /**
     * How connections reach the brokers: {@code securityProtocol}, the SASL mechanism and this connection's user and
     * password, the TLS stores.
     */
    public ClientSecurity security() {
        ClientSecurity s = security;
        if (s == null) {
            s = ClientSecurity.create(securityProtocol, saslMechanism, user, password, sslConfigs);
            security = s;
        }
        return s;
    }

    /** Equal for settings that create and configure destinations alike (see {@code SharedClients}). */
    public String destinationKey() {
        return destinationKey;
    }

    /** The redelivery and expiry policy of each destination. */
    public DestinationPolicies destinationPolicies() {
        return destinationPolicies;
    }

    /** Whether consumers write their destination's policy to the broker. */
    public boolean manageDestinationPolicies() {
        return manageDestinationPolicies;
    }

    /** Whether CLIENT_ACKNOWLEDGE's acknowledge() waits for the broker. */
    public boolean blockOnAcknowledge() {
        return blockOnAcknowledge;
    }

    public String brokers() {
        return brokers;
    }

    public String clientId() {
        return clientId;
    }

    /** The user name given to {@code createConnection(user, password)}, or null. */
    public String user() {
        return user;
    }

    public String persistentAcks() {
        return persistentAcks;
    }

    public String nonPersistentAcks() {
        return nonPersistentAcks;
    }

    public int lingerMs() {
        return lingerMs;
    }

    public int batchSizeBytes() {
        return batchSizeBytes;
    }

    public int prefetch() {
        return prefetch;
    }

    public int prefetchBytes() {
        return prefetchBytes;
    }

    public int prefetchIdleReleaseMs() {
        return prefetchIdleReleaseMs;
    }

    public int requestTimeoutMs() {
        return requestTimeoutMs;
    }

    public int transactionTimeoutMs() {
        return transactionTimeoutMs;
    }

    /** How long blocking calls retry while the cluster is unreachable, and how long until the ExceptionListener. */
    public int failoverTimeoutMs() {
        return failoverTimeoutMs;
    }

    /**
     * The longest a blocking call waits for the broker: {@code requestTimeoutMs} for an answer plus
     * {@code failoverTimeoutMs} of retrying while the cluster is unreachable.
     */
    public int blockingTimeoutMs() {
        return (int) Math.min(Integer.MAX_VALUE, (long) requestTimeoutMs + failoverTimeoutMs);
    }

    public int connectionCheckIntervalMs() {
        return connectionCheckIntervalMs;
    }

    public boolean autoCreateDestinations() {
        return autoCreateDestinations;
    }

    public int destinationPartitions() {
        return destinationPartitions;
    }

    public short destinationReplicationFactor() {
        return destinationReplicationFactor;
    }
}
