package dev.millrace.jms;

import java.beans.IntrospectionException;
import java.beans.Introspector;
import java.beans.PropertyDescriptor;
import java.io.Serializable;
import java.lang.reflect.InvocationTargetException;
import java.util.Map;
import java.util.TreeMap;

import javax.naming.NamingException;
import javax.naming.Reference;
import javax.naming.Referenceable;
import javax.naming.StringRefAddr;

import dev.millrace.jms.jndi.ConnectionFactoryObjectFactory;
import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.JMSRuntimeException;
import jakarta.jms.JMSSecurityException;
import jakarta.jms.QueueConnection;
import jakarta.jms.QueueConnectionFactory;
import jakarta.jms.TopicConnection;
import jakarta.jms.TopicConnectionFactory;

/**
 * The entry point of the Millrace JMS provider: makes connections to a Millrace broker cluster.
 *
 * <pre>
 * ConnectionFactory cf = new MillraceConnectionFactory("broker1:9092,broker2:9092");
 * </pre>
 *
 * <p>Every option is a JavaBean property (so Spring, JNDI and containers can set it) and is documented with its
 * default in {@code provider/README.md}. Options are read when a connection is created; changing them later affects
 * only later connections. {@link #setProperties(Map)} sets options by name from strings and rejects unknown names.
 *
 * <p>Serializable, and {@link Referenceable} through {@link ConnectionFactoryObjectFactory}, which restores every
 * option. Setters are not synchronized: configure the factory before sharing it between threads; creating
 * connections is thread-safe.
 */
public class MillraceConnectionFactory implements ConnectionFactory, QueueConnectionFactory, TopicConnectionFactory,
        Serializable, Referenceable {

    private static final long serialVersionUID = 1L;

    /** The broker list of the no-argument constructor. */
    public static final String DEFAULT_BROKERS = "localhost:9092";

    private String brokers = DEFAULT_BROKERS;
    private String clientId;
    private String user;
    private String password;
    private String persistentAcks = "all";
    private String nonPersistentAcks = "1";
    private int lingerMs = 0;
    private int batchSizeBytes = 65_536;
    private int prefetch = 1000;
    private int prefetchBytes = 1024 * 1024;
    private int prefetchIdleReleaseMs = 100;
    private int requestTimeoutMs = 30_000;
    private int connectionCheckIntervalMs = 1000;
    private int failoverTimeoutMs = 30_000;
    private int transactionTimeoutMs = 60_000;
    private boolean autoCreateDestinations = true;
    private int destinationPartitions = 1;
    private short destinationReplicationFactor = -1;
    private int maxDeliveries = 10;
    private long redeliveryDelayMs = 0;
    private long maxRedeliveryDelayMs = 60_000;
    private String deadLetterQueuePattern = DestinationPolicies.PLACEHOLDER + ".DLQ";
    private String expiryQueuePattern = "";
    private String destinationPolicies = "";
    private boolean manageDestinationPolicies = true;
    private boolean blockOnAcknowledge = true;
    private String securityProtocol = "PLAINTEXT";
    private String saslMechanism = "SCRAM-SHA-512";
    private String sslTruststoreLocation;
    private String sslTruststorePassword;
    private String sslKeystoreLocation;
    private String sslKeystorePassword;

    /** A factory for the broker at {@value #DEFAULT_BROKERS}. */
    public MillraceConnectionFactory() {
    }

    /**
     * @param brokers bootstrap brokers, {@code host:port[,host:port...]}
     * @throws IllegalArgumentException if the list is empty or an entry is not {@code host:port}
     */
    public MillraceConnectionFactory(String brokers) {
        setBrokers(brokers);
    }

    // ---- connections

    @Override
    public Connection createConnection() throws JMSException {
        return createConnection(user, password);
    }

    @Override
    public Connection createConnection(String userName, String password) throws JMSException {
        return MillraceConnection.open(settings(userName, password));
    }

    /** The options, checked, for a connection of {@code userName}. */
    ConnectionSettings settings(String userName, String password) throws JMSException {
        boolean sasl = securityProtocol != null && securityProtocol.trim().toUpperCase(java.util.Locale.ROOT)
                .startsWith("SASL_");
        if (sasl && (userName == null || userName.isEmpty() || password == null)) {
            throw new JMSSecurityException("securityProtocol " + securityProtocol + " authenticates with SASL: "
                    + "give a user and a password (createConnection(user, password), or the user and password "
                    + "options)");
        }
        try {
            return new ConnectionSettings(this, userName, password);
        } catch (IllegalArgumentException e) {
            JMSException jmse = new JMSException("invalid connection factory options: " + e.getMessage());
            jmse.initCause(e);
            throw jmse;
        }
    }

    @Override
    public QueueConnection createQueueConnection() throws JMSException {
        return (QueueConnection) createConnection();
    }

    @Override
    public QueueConnection createQueueConnection(String userName, String password) throws JMSException {
        return (QueueConnection) createConnection(userName, password);
    }

    @Override
    public TopicConnection createTopicConnection() throws JMSException {
        return (TopicConnection) createConnection();
    }

    @Override
    public TopicConnection createTopicConnection(String userName, String password) throws JMSException {
        return (TopicConnection) createConnection(userName, password);
    }

    @Override
    public JMSContext createContext() {
        return createContext(user, password, JMSContext.AUTO_ACKNOWLEDGE);
    }

    @Override
    public JMSContext createContext(String userName, String password) {
        return createContext(userName, password, JMSContext.AUTO_ACKNOWLEDGE);
    }

    @Override
    public JMSContext createContext(String userName, String password, int sessionMode) {
        MillraceConnection connection;
        try {
            connection = (MillraceConnection) createConnection(userName, password);
        } catch (JMSException e) {
            throw JmsExceptions.toRuntime(e);
        }
        return MillraceJMSContext.create(connection, sessionMode, true);
    }

    @Override
    public JMSContext createContext(int sessionMode) {
        return createContext(user, password, sessionMode);
    }

    // ---- options

    public String getBrokers() {
        return brokers;
    }

    /** Bootstrap brokers, {@code host:port[,host:port...]}; default {@value #DEFAULT_BROKERS}. */
    public void setBrokers(String brokers) {
        if (brokers == null || brokers.isBlank()) {
            throw new IllegalArgumentException("brokers must be host:port[,host:port...], not empty");
        }
        for (String entry : brokers.split(",")) {
            String e = entry.trim();
            int colon = e.lastIndexOf(':');
            if (colon <= 0 || colon == e.length() - 1 || !e.substring(colon + 1).chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException("broker '" + e + "' in '" + brokers + "' is not host:port");
            }
        }
        this.brokers = brokers;
    }

    public String getClientId() {
        return clientId;
    }

    /** The client id given to every connection; default none (the application may call setClientID). */
    public void setClientId(String clientId) {
        this.clientId = clientId;
    }

    public String getUser() {
        return user;
    }

    /**
     * User for {@link #createConnection()} and {@link #createContext()}; sent to the broker (SASL) when
     * {@code securityProtocol} is SASL_PLAINTEXT or SASL_SSL, not used otherwise.
     */
    public void setUser(String user) {
        this.user = user;
    }

    public String getPassword() {
        return password;
    }

    /** Password of {@link #setUser user}; sent (SASL) only with the SASL security protocols. */
    public void setPassword(String password) {
        this.password = password;
    }

    public String getSecurityProtocol() {
        return securityProtocol;
    }

    /**
     * How connections reach the brokers, as Kafka names it: {@code PLAINTEXT} (default), {@code SSL},
     * {@code SASL_PLAINTEXT} or {@code SASL_SSL}. With the SASL protocols, {@code createConnection(user, password)}
     * (or the user and password options) authenticates with {@code saslMechanism}, and wrong credentials fail
     * {@code createConnection} with JMSSecurityException.
     */
    public void setSecurityProtocol(String securityProtocol) {
        this.securityProtocol = securityProtocol;
    }

    public String getSaslMechanism() {
        return saslMechanism;
    }

    /** SASL mechanism of the SASL protocols: {@code SCRAM-SHA-512} (default), {@code SCRAM-SHA-256} or {@code PLAIN}. */
    public void setSaslMechanism(String saslMechanism) {
        this.saslMechanism = saslMechanism;
    }

    public String getSslTruststoreLocation() {
        return sslTruststoreLocation;
    }

    /**
     * Trust store (PKCS12 or JKS) with the authorities whose broker certificates are trusted, for SSL and SASL_SSL;
     * default: the JVM's. The broker's host name is checked against its certificate.
     */
    public void setSslTruststoreLocation(String sslTruststoreLocation) {
        this.sslTruststoreLocation = sslTruststoreLocation;
    }

    public String getSslTruststorePassword() {
        return sslTruststorePassword;
    }

    /** Password of {@code sslTruststoreLocation}. */
    public void setSslTruststorePassword(String sslTruststorePassword) {
        this.sslTruststorePassword = sslTruststorePassword;
    }

    public String getSslKeystoreLocation() {
        return sslKeystoreLocation;
    }

    /** Key store with this client's key and certificate, for brokers that ask for client certificates. */
    public void setSslKeystoreLocation(String sslKeystoreLocation) {
        this.sslKeystoreLocation = sslKeystoreLocation;
    }

    public String getSslKeystorePassword() {
        return sslKeystorePassword;
    }

    /** Password of {@code sslKeystoreLocation}. */
    public void setSslKeystorePassword(String sslKeystorePassword) {
        this.sslKeystorePassword = sslKeystorePassword;
    }

    public String getPersistentAcks() {
        return persistentAcks;
    }

    /** Kafka {@code acks} for PERSISTENT sends: {@code all} (default), {@code 1} or {@code 0}. */
    public void setPersistentAcks(String persistentAcks) {
        this.persistentAcks = checkAcks("persistentAcks", persistentAcks);
    }

    public String getNonPersistentAcks() {
        return nonPersistentAcks;
    }

    /** Kafka {@code acks} for NON_PERSISTENT sends: {@code 1} (default), {@code all} or {@code 0}. */
    public void setNonPersistentAcks(String nonPersistentAcks) {
        this.nonPersistentAcks = checkAcks("nonPersistentAcks", nonPersistentAcks);
    }

    public int getLingerMs() {
        return lingerMs;
    }

    /** How long the producer waits to fill a batch ({@code linger.ms}); default 0. */
    public void setLingerMs(int lingerMs) {
        this.lingerMs = checkAtLeast("lingerMs", lingerMs, 0);
    }

    public int getBatchSizeBytes() {
        return batchSizeBytes;
    }

    /**
     * Most bytes of one produce batch per partition ({@code batch.size}); default 65536, four times kafka-clients'
     * default: with {@code lingerMs} 0 no send waits for a batch to fill, while a burst of asynchronous sends
     * (waiting behind the requests in flight) goes in fewer, larger requests; 1 KiB async sends ran 1.5-1.9x faster
     * than at 16384 in {@code JmsUserComparison} (bench/RESULTS.md). The cost, measured there: a topic subscriber in
     * a fresh JVM at 5,000 msgs/s saw ~2 ms more p99 (bursts arrive in larger batches); set 16384 where that
     * matters more than send throughput. The producer's 32 MiB buffer bounds the memory.
     */
    public void setBatchSizeBytes(int batchSizeBytes) {
        this.batchSizeBytes = checkAtLeast("batchSizeBytes", batchSizeBytes, 0);
    }

    public int getPrefetch() {
        return prefetch;
    }

    /**
     * Most messages a consumer holds fetched ahead of the application (not yet handed to it); default 1000. Messages
     * handed to the application and not yet acknowledged do not count. A queue consumer whose application takes
     * messages slowly reads fewer ahead: what it takes in a quarter of the broker's record lock duration.
     */
    public void setPrefetch(int prefetch) {
        this.prefetch = checkAtLeast("prefetch", prefetch, 1);
    }

    public int getPrefetchBytes() {
        return prefetchBytes;
    }

    /** Most bytes of records a queue consumer asks for in one fetch ahead of the application; default 1 MiB. */
    public void setPrefetchBytes(int prefetchBytes) {
        this.prefetchBytes = checkAtLeast("prefetchBytes", prefetchBytes, 1024);
    }

    public int getPrefetchIdleReleaseMs() {
        return prefetchIdleReleaseMs;
    }

    /**
     * How long a queue consumer keeps messages it fetched ahead once its application stops asking (no listener, no
     * receive waiting or made within this time); then it returns them to the queue for other consumers, uncounted
     * as a delivery. Default 100.
     */
    public void setPrefetchIdleReleaseMs(int prefetchIdleReleaseMs) {
        this.prefetchIdleReleaseMs = checkAtLeast("prefetchIdleReleaseMs", prefetchIdleReleaseMs, 1);
    }

    public int getRequestTimeoutMs() {
        return requestTimeoutMs;
    }

    /** Longest wait for the broker in any blocking call (send, create, close); default 30000. */
    public void setRequestTimeoutMs(int requestTimeoutMs) {
        this.requestTimeoutMs = checkAtLeast("requestTimeoutMs", requestTimeoutMs, 1);
    }

    public int getConnectionCheckIntervalMs() {
        return connectionCheckIntervalMs;
    }

    /**
     * How often a connection checks that the brokers answer, to call its ExceptionListener once they have not for
     * longer than {@code failoverTimeoutMs}; default 1000.
     */
    public void setConnectionCheckIntervalMs(int connectionCheckIntervalMs) {
        this.connectionCheckIntervalMs = checkAtLeast("connectionCheckIntervalMs", connectionCheckIntervalMs, 10);
    }

    public int getFailoverTimeoutMs() {
        return failoverTimeoutMs;
    }

    /**
     * How long a connection rides out an unreachable cluster (brokers restarting, leaders and coordinators moving):
     * blocking calls wait and retry for up to this long on top of {@code requestTimeoutMs}, and the ExceptionListener
     * is called only once the cluster has stayed unreachable for longer; 0 = no failover (the first failure counts).
     * Default 30000. See "Failover" in {@code provider/README.md}.
     */
    public void setFailoverTimeoutMs(int failoverTimeoutMs) {
        this.failoverTimeoutMs = checkAtLeast("failoverTimeoutMs", failoverTimeoutMs, 0);
    }

    public int getTransactionTimeoutMs() {
        return transactionTimeoutMs;
    }

    /**
     * How long the broker lets a transacted session's transaction stay open before aborting it (Kafka's
     * {@code transaction.timeout.ms}): the bound on how long a crashed client's uncommitted sends hold back
     * read-committed consumers; default 60000.
     */
    public void setTransactionTimeoutMs(int transactionTimeoutMs) {
        this.transactionTimeoutMs = checkAtLeast("transactionTimeoutMs", transactionTimeoutMs, 1);
    }

    public boolean isAutoCreateDestinations() {
        return autoCreateDestinations;
    }

    /** Create a named queue or topic on first use when it does not exist; default true. */
    public void setAutoCreateDestinations(boolean autoCreateDestinations) {
        this.autoCreateDestinations = autoCreateDestinations;
    }

    public int getDestinationPartitions() {
        return destinationPartitions;
    }

    /** Partitions of a destination created on first use; default 1. */
    public void setDestinationPartitions(int destinationPartitions) {
        this.destinationPartitions = checkAtLeast("destinationPartitions", destinationPartitions, 1);
    }

    public short getDestinationReplicationFactor() {
        return destinationReplicationFactor;
    }

    /** Replicas of a destination created on first use; default -1, the broker's default. */
    public void setDestinationReplicationFactor(short destinationReplicationFactor) {
        if (destinationReplicationFactor == 0 || destinationReplicationFactor < -1) {
            throw new IllegalArgumentException("destinationReplicationFactor must be -1 or at least 1, not "
                    + destinationReplicationFactor);
        }
        this.destinationReplicationFactor = destinationReplicationFactor;
    }

    public int getMaxDeliveries() {
        return maxDeliveries;
    }

    /**
     * Deliveries of a queue message after which the broker moves it to the dead-letter queue instead of delivering
     * it again (1..32767); default 10. Set on the queue's share group when a consumer first uses the queue.
     */
    public void setMaxDeliveries(int maxDeliveries) {
        this.maxDeliveries = checkAtLeast("maxDeliveries", maxDeliveries, 1);
        if (maxDeliveries > DestinationPolicies.MAX_DELIVERIES_LIMIT) {
            throw new IllegalArgumentException("maxDeliveries must be at most " + DestinationPolicies.MAX_DELIVERIES_LIMIT
                    + ", not " + maxDeliveries);
        }
    }

    public long getRedeliveryDelayMs() {
        return redeliveryDelayMs;
    }

    /**
     * How long a released queue message waits before it is delivered again, doubling with each further delivery up
     * to {@code maxRedeliveryDelayMs}; default 0 (at once).
     */
    public void setRedeliveryDelayMs(long redeliveryDelayMs) {
        if (redeliveryDelayMs < 0) {
            throw new IllegalArgumentException("redeliveryDelayMs must be at least 0, not " + redeliveryDelayMs);
        }
        this.redeliveryDelayMs = redeliveryDelayMs;
    }

    public long getMaxRedeliveryDelayMs() {
        return maxRedeliveryDelayMs;
    }

    /** Cap of the doubling redelivery delay; equal to {@code redeliveryDelayMs} for a fixed delay; default 60000. */
    public void setMaxRedeliveryDelayMs(long maxRedeliveryDelayMs) {
        if (maxRedeliveryDelayMs < 0) {
            throw new IllegalArgumentException("maxRedeliveryDelayMs must be at least 0, not " + maxRedeliveryDelayMs);
        }
        this.maxRedeliveryDelayMs = maxRedeliveryDelayMs;
    }

    public String getDeadLetterQueuePattern() {
        return deadLetterQueuePattern;
    }

    /** Name of a queue's dead-letter queue, {@code {destination}} standing for the queue; default {@code {destination}.DLQ}; empty: none set. */
    public void setDeadLetterQueuePattern(String deadLetterQueuePattern) {
        new DestinationPolicies(1, 0, 0, deadLetterQueuePattern, "", "");
        this.deadLetterQueuePattern = deadLetterQueuePattern == null ? "" : deadLetterQueuePattern.trim();
    }

    public String getExpiryQueuePattern() {
        return expiryQueuePattern;
    }

    /** Name of a destination's expiry queue, as {@code deadLetterQueuePattern}; default empty: none set. */
    public void setExpiryQueuePattern(String expiryQueuePattern) {
        new DestinationPolicies(1, 0, 0, "", expiryQueuePattern, "");
        this.expiryQueuePattern = expiryQueuePattern == null ? "" : expiryQueuePattern.trim();
    }

    public String getDestinationPolicies() {
        return destinationPolicies;
    }

    /** Per-destination overrides of the redelivery and expiry options (syntax in {@link DestinationPolicies}); default none. */
    public void setDestinationPolicies(String destinationPolicies) {
        DestinationPolicies.checkSyntax(destinationPolicies);
        this.destinationPolicies = destinationPolicies == null ? "" : destinationPolicies;
    }

    public boolean isManageDestinationPolicies() {
        return manageDestinationPolicies;
    }

    /**
     * Whether consumers write the redelivery policy, dead-letter queue and expiry queue to the broker (share-group
     * and topic configs) when they first use a destination; default true. Off: whatever an administrator set applies.
     */
    public void setManageDestinationPolicies(boolean manageDestinationPolicies) {
        this.manageDestinationPolicies = manageDestinationPolicies;
    }

    public boolean isBlockOnAcknowledge() {
        return blockOnAcknowledge;
    }

    /**
     * Whether {@code acknowledge()} in CLIENT_ACKNOWLEDGE waits for the broker's answer (and throws when a message's
     * lock expired first); default true: a message whose acknowledge() returned is never delivered again, even if the
     * process dies right after. False: the acceptances leave at once and {@code acknowledge()} returns (as with the
     * Artemis client's default {@code blockOnAcknowledge=false}); they still reach the broker before anything this
     * consumer sends later, its close included, but a process killed right after may get them again.
     */
    public void setBlockOnAcknowledge(boolean blockOnAcknowledge) {
        this.blockOnAcknowledge = blockOnAcknowledge;
    }

    // ---- by name

    /**
     * Sets options by property name from their string forms, e.g. {@code prefetch=10}.
     *
     * @throws IllegalArgumentException naming the option, for an unknown option or a value that does not fit it
     */
    public void setProperties(Map<String, String> options) {
        Map<String, PropertyDescriptor> known = properties();
        for (Map.Entry<String, String> option : options.entrySet()) {
            PropertyDescriptor p = known.get(option.getKey());
            if (p == null) {
                throw new IllegalArgumentException("unknown connection factory option '" + option.getKey()
                        + "'; known options: " + known.keySet());
            }
            Object value;
            try {
                value = convert(p.getPropertyType(), option.getValue());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("option " + option.getKey() + ": " + e.getMessage(), e);
            }
            try {
                p.getWriteMethod().invoke(this, value);
            } catch (InvocationTargetException e) {
                throw new IllegalArgumentException("option " + option.getKey() + ": " + e.getCause().getMessage(),
                        e.getCause());
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Every option that is set, by property name, as strings {@link #setProperties} accepts. */
    public Map<String, String> getProperties() {
        Map<String, String> values = new TreeMap<>();
        for (PropertyDescriptor p : properties().values()) {
            try {
                Object value = p.getReadMethod().invoke(this);
                if (value != null) {
                    values.put(p.getName(), String.valueOf(value));
                }
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        return values;
    }

    @Override
    public Reference getReference() throws NamingException {
        return reference(MillraceConnectionFactory.class.getName());
    }

    /** A JNDI reference to a factory of {@code className} with these options. */
    Reference reference(String className) {
        Reference reference = new Reference(className, ConnectionFactoryObjectFactory.class.getName(), null);
        getProperties().forEach((name, value) -> reference.add(new StringRefAddr(name, value)));
        return reference;
    }

    private static Map<String, PropertyDescriptor> properties() {
        try {
            Map<String, PropertyDescriptor> known = new TreeMap<>();
            for (PropertyDescriptor p : Introspector.getBeanInfo(MillraceConnectionFactory.class, Object.class)
                    .getPropertyDescriptors()) {
                if (p.getReadMethod() != null && p.getWriteMethod() != null && !"properties".equals(p.getName())) {
                    known.put(p.getName(), p);
                }
            }
            return known;
        } catch (IntrospectionException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Object convert(Class<?> type, String value) {
        try {
            if (type == int.class) {
                return Integer.parseInt(value.trim());
            }
            if (type == long.class) {
                return Long.parseLong(value.trim());
            }
            if (type == short.class) {
                return Short.parseShort(value.trim());
            }
            if (type == boolean.class) {
                if (!"true".equalsIgnoreCase(value.trim()) && !"false".equalsIgnoreCase(value.trim())) {
                    throw new IllegalArgumentException("'" + value + "' is not true or false");
                }
                return Boolean.parseBoolean(value.trim());
            }
            return value;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + value + "' is not a number", e);
        }
    }

    private static String checkAcks(String name, String acks) {
        if (!"all".equals(acks) && !"1".equals(acks) && !"0".equals(acks) && !"-1".equals(acks)) {
            throw new IllegalArgumentException(name + " must be all, -1, 1 or 0, not " + acks);
        }
        return acks;
    }

    private static int checkAtLeast(String name, int value, int min) {
        if (value < min) {
            throw new IllegalArgumentException(name + " must be at least " + min + ", not " + value);
        }
        return value;
    }

    @Override
    public String toString() {
        return "MillraceConnectionFactory" + getProperties().entrySet().stream()
                .filter(e -> !e.getKey().toLowerCase(java.util.Locale.ROOT).endsWith("password")).toList();
    }
}
