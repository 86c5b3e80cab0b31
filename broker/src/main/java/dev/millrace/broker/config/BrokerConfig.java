package dev.millrace.broker.config;

import java.io.File;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import dev.millrace.broker.log.LogConfig;
import dev.millrace.broker.log.LogMaintenance;
import dev.millrace.broker.network.ConnectionLimits;
import dev.millrace.broker.share.ShareGroupConfig;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;

/**
 * The broker's settings. Each field is one setting, named in the configuration file by its
 * {@link Setting} annotation; {@link BrokerConfigLoader} reads a file plus defaults into an instance
 * and validates it with Bean Validation, reporting every problem by setting name.
 *
 * <p>Defaults give the embedded single node the README starts: a listener on localhost:9092, data
 * under {@code ./data}, a single-voter metadata quorum on localhost:9093. Topic-level defaults use
 * Kafka's broker names ({@code log.segment.bytes}, ...) and apply to topics that do not set their own.
 *
 * <p>Cluster settings ({@code controller.quorum.voters}, {@code broker.rack}, {@code min.insync.replicas},
 * {@code replica.*}, {@code broker.session.timeout.ms}, ...) use Kafka's names. Their defaults keep the
 * embedded single node; the loader cross-checks them ({@link ClusterSettings}).
 *
 * <p>Instances are filled once by the loader and not changed afterwards; safe to share after that.
 */
public final class BrokerConfig {

    @Setting(name = "node.id", doc = "This broker's id in the cluster.")
    @Min(0)
    int nodeId = 1;

    @Setting(name = "host", doc = "Address the Kafka-protocol listener binds and advertises.")
    @NotBlank
    String host = "localhost";

    @Setting(name = "port", doc = "Port of the Kafka-protocol listener; 0 picks a free port.")
    @Min(0)
    @Max(65535)
    int port = 9092;

    @Setting(name = "advertised.host", doc = "Host clients are told to connect to (Metadata, FindCoordinator); "
            + "empty means the listener's host.")
    String advertisedHost = "";

    @Setting(name = "advertised.port", doc = "Port clients are told to connect to; 0 means the listener's bound "
            + "port. Set it when clients reach the broker through a proxy or port mapping.")
    @Min(0)
    @Max(65535)
    int advertisedPort = 0;

    @Setting(name = "listeners", doc = "The Kafka-protocol listeners, NAME://host:port[,NAME://host:port...], each "
            + "name mapped to its security protocol by listener.security.protocol.map (e.g. "
            + "SASL_SSL://127.0.0.1:9094,PLAINTEXT://127.0.0.1:9092). An empty host binds every interface; port 0 "
            + "picks a free port. Empty (the default) means one PLAINTEXT listener on host:port.")
    String listeners = "";

    @Setting(name = "advertised.listeners", doc = "Addresses clients are told to use, NAME://host:port per "
            + "listener of listeners; a listener not named here advertises its own address. Metadata and "
            + "FindCoordinator answer each client with the address of the listener it connected to.")
    String advertisedListeners = "";

    @Setting(name = "listener.security.protocol.map", doc = "Each listener name's security protocol, "
            + "NAME:PROTOCOL[,...], protocols PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL.")
    String listenerSecurityProtocolMap = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL";

    @Setting(name = "inter.broker.listener.name", doc = "The listener other nodes reach this one on (registered "
            + "with the controller); empty means the listener named PLAINTEXT, else the first one. A node connects "
            + "to the others with this listener's protocol: TLS with ssl.truststore.* (and ssl.keystore.* when the "
            + "listener asks for client certificates), SASL with sasl.mechanism.inter.broker.protocol and the "
            + "username and password of the listener's JAAS entry for that mechanism. Its principal must be in "
            + "super.users when the authorizer is on.")
    String interBrokerListenerName = "";

    @Setting(name = "sasl.mechanism.inter.broker.protocol", doc = "The SASL mechanism a node authenticates with "
            + "when the inter-broker listener is SASL_PLAINTEXT or SASL_SSL: one of sasl.enabled.mechanisms; empty "
            + "means the first of them. Its credentials are the username and password options of "
            + "listener.name.<inter-broker listener>.<mechanism>.sasl.jaas.config (a SCRAM user must have been "
            + "created with alterUserScramCredentials before the nodes can replicate).")
    String saslMechanismInterBrokerProtocol = "";

    @Setting(name = "ssl.keystore.location", doc = "The broker's key store (its private key and certificate "
            + "chain), used by SSL and SASL_SSL listeners.")
    String sslKeystoreLocation = "";

    @Setting(name = "ssl.keystore.password", doc = "Password of ssl.keystore.location.", sensitive = true)
    String sslKeystorePassword = "";

    @Setting(name = "ssl.keystore.type", doc = "Format of ssl.keystore.location: PKCS12, JKS or PEM.")
    @Pattern(regexp = "PKCS12|JKS|PEM", flags = Pattern.Flag.CASE_INSENSITIVE)
    String sslKeystoreType = "PKCS12";

    @Setting(name = "ssl.key.password", doc = "Password of the private key in ssl.keystore.location (an encrypted "
            + "PEM key, or a PKCS12/JKS key with its own password); empty means the key store's.", sensitive = true)
    String sslKeyPassword = "";

    @Setting(name = "ssl.truststore.location", doc = "Certificates of the authorities whose client certificates "
            + "are trusted (ssl.client.auth); empty means the JVM's default trust store.")
    String sslTruststoreLocation = "";

    @Setting(name = "ssl.truststore.password", doc = "Password of ssl.truststore.location.", sensitive = true)
    String sslTruststorePassword = "";

    @Setting(name = "ssl.truststore.type", doc = "Format of ssl.truststore.location: PKCS12, JKS or PEM.")
    @Pattern(regexp = "PKCS12|JKS|PEM", flags = Pattern.Flag.CASE_INSENSITIVE)
    String sslTruststoreType = "PKCS12";

    @Setting(name = "ssl.enabled.protocols", doc = "TLS versions the SSL and SASL_SSL listeners accept.")
    @Pattern(regexp = "(TLSv1\\.[23])(,\\s*TLSv1\\.[23])*")
    String sslEnabledProtocols = "TLSv1.3,TLSv1.2";

    @Setting(name = "ssl.engine", doc = "The TLS implementation of the SSL and SASL_SSL listeners (a Millrace "
            + "setting): openssl (BoringSSL through netty-tcnative, refused at start where its native library does "
            + "not load), jdk (the JDK's SSLEngine), or auto: openssl where it loads, else jdk.")
    @Pattern(regexp = "auto|jdk|openssl", flags = Pattern.Flag.CASE_INSENSITIVE)
    String sslEngine = "auto";

    @Setting(name = "ssl.client.auth", doc = "Client certificates on SSL listeners: none, requested (checked when "
            + "sent) or required. The subject of a trusted client certificate becomes the connection's principal "
            + "(User:<subject>, mapped by ssl.principal.mapping.rules) on SSL listeners.")
    @Pattern(regexp = "none|requested|required")
    String sslClientAuth = "none";

    @Setting(name = "ssl.principal.mapping.rules", doc = "Rules mapping a client certificate's subject to a user "
            + "name, as Kafka writes them (RULE:pattern/replacement/[LU], ...); DEFAULT keeps the whole subject.")
    String sslPrincipalMappingRules = "DEFAULT";

    @Setting(name = "sasl.enabled.mechanisms", doc = "SASL mechanisms SASL_PLAINTEXT and SASL_SSL listeners offer: "
            + "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512. PLAIN users come from "
            + "listener.name.<listener>.plain.sasl.jaas.config (PlainLoginModule required user_<name>=\"<password>\";), "
            + "which every SASL listener needs when PLAIN is enabled; SCRAM credentials are created with the Admin API "
            + "(alterUserScramCredentials) and kept, salted, in the metadata log.")
    String saslEnabledMechanisms = "SCRAM-SHA-256,SCRAM-SHA-512";

    @Setting(name = "authorizer.class.name", doc = "Turns on ACL authorization when set (to any name: Millrace "
            + "has one authorizer, with Kafka's ACL semantics, e.g. "
            + "org.apache.kafka.metadata.authorizer.StandardAuthorizer). Unset, every client may do everything.")
    String authorizerClassName = "";

    @Setting(name = "super.users", doc = "Principals always allowed when the authorizer is on, separated by ';' "
            + "(User:admin;User:CN=broker). Brokers that forward requests to each other connect with the "
            + "inter-broker listener's principal, which must be one.")
    String superUsers = "";

    @Setting(name = "allow.everyone.if.no.acl.found", doc = "When the authorizer is on, whether a resource that no "
            + "ACL names is open to everyone (true) or to super users only (false, as Kafka).")
    boolean allowEveryoneIfNoAclFound = false;

    @Setting(name = "quota.window.num", doc = "How many samples client quotas are measured over (set with the "
            + "Admin API, alterClientQuotas): a client's rate is its usage in the last quota.window.num samples of "
            + "quota.window.size.seconds each, and it is throttled for at most that whole window.")
    @Min(2)
    @Max(1000)
    int quotaWindowNum = 11;

    @Setting(name = "quota.window.size.seconds", doc = "The length of one client quota sample, in seconds.")
    @Min(1)
    @Max(3600)
    int quotaWindowSizeSeconds = 1;

    @Setting(name = "data.dir", doc = "Directory holding the partition logs and the metadata quorum's state.")
    @NotBlank
    String dataDir = "data";

    @Setting(name = "controller.host", doc = "IP address the embedded metadata quorum voter binds; with the port "
            + "it identifies the voter, so it must not change across restarts. When controller.quorum.voters is set, "
            + "this node's entry there gives the address; leave this unset or give the same host. On a node that is "
            + "not in controller.quorum.voters (a broker only) it is the address of its metadata learner, which the "
            + "voters connect to.")
    @NotBlank
    String controllerHost = "127.0.0.1";

    @Setting(name = "controller.port", doc = "Port of the embedded metadata quorum voter (SOFAJRaft); it must not "
            + "change across restarts, since it is part of the quorum membership. When controller.quorum.voters is "
            + "set, this node's entry there gives the port; leave this unset or give the same port. On a node that is "
            + "not in controller.quorum.voters (a broker only) it is the port of its metadata learner, which "
            + "replicates the metadata log without voting; it must not be a voter's port on the same host.")
    @Min(1)
    @Max(65535)
    int controllerPort = 9093;

    @Setting(name = "controller.quorum.start.timeout.ms", doc = "How long a starting node waits for a leader of "
            + "the metadata quorum and to catch up with its log before it stops with an error naming the voters; "
            + "while the node keeps applying entries the wait goes on, one such window at a time, up to ten.")
    @Min(1)
    int controllerQuorumStartTimeoutMs = 30_000;

    @Setting(name = "controller.quorum.security.protocol", doc = "How the metadata quorum's nodes (voters and "
            + "learners) talk to each other on their controller ports: PLAINTEXT, or SSL (mutual TLS: each node "
            + "presents the certificate of ssl.keystore.location and accepts peers whose certificate that same store "
            + "trusts, so the store must also hold the authority's certificate; PKCS12 or JKS). Every node of a "
            + "cluster must use the same.")
    @Pattern(regexp = "PLAINTEXT|SSL", flags = Pattern.Flag.CASE_INSENSITIVE)
    String controllerQuorumSecurityProtocol = "PLAINTEXT";

    @Setting(name = "controller.quorum.voters", doc = "The metadata quorum's voters, id@host:port[,id@host:port...], "
            + "the same list on every node; each voter listens on its own entry's address. Empty (the default) "
            + "means embedded mode: this node is the only voter, on controller.host:controller.port. When set, a "
            + "node whose node.id is one of the ids is a voter; any other node joins as a broker only, running a "
            + "metadata learner on controller.host:controller.port that the raft leader adds to the quorum (it "
            + "never votes or becomes the controller, and stays in the quorum's configuration after it leaves).")
    String controllerQuorumVoters = "";

    @Setting(name = "broker.rack", doc = "This broker's rack; the controller spreads a partition's replicas over "
            + "racks when brokers set it. Empty means no rack.")
    String brokerRack = "";

    @Setting(name = "min.insync.replicas", doc = "Default min.insync.replicas of topics: with fewer replicas in the "
            + "ISR, acks=all produces fail with NOT_ENOUGH_REPLICAS.")
    @Min(1)
    int minInsyncReplicas = 1;

    @Setting(name = "replica.lag.time.max.ms", doc = "A follower that has not caught up with the leader's log end "
            + "for this long leaves the ISR; it rejoins when it catches up.")
    @Min(1)
    long replicaLagTimeMaxMs = 30_000;

    @Setting(name = "replica.fetch.wait.max.ms", doc = "Longest time a follower's fetch waits at the leader for new "
            + "records; less than replica.lag.time.max.ms, so that a caught-up follower is not dropped from the ISR.")
    @Min(0)
    int replicaFetchWaitMaxMs = 500;

    @Setting(name = "broker.session.timeout.ms", doc = "A broker that sends the controller no heartbeat for this long "
            + "is fenced: it leads no partitions and leaves every ISR.")
    @Min(1)
    int brokerSessionTimeoutMs = 9000;

    @Setting(name = "broker.heartbeat.interval.ms", doc = "How often a broker heartbeats to the controller; less "
            + "than broker.session.timeout.ms. A broker whose connection to the active controller closes (a killed "
            + "process), or that ran the previous active controller, is fenced unless it heartbeats within two "
            + "intervals: so this, not the session timeout, sets how fast a killed broker's partitions move. "
            + "Kafka's default is 2000; Millrace's 500 moves them in about a second.")
    @Min(1)
    int brokerHeartbeatIntervalMs = 500;

    @Setting(name = "unclean.leader.election.enable", doc = "Default unclean.leader.election.enable of topics: "
            + "whether a replica outside the ISR may become leader when no ISR member is alive, at the price of "
            + "losing acknowledged records.")
    boolean uncleanLeaderElectionEnable = false;

    @Setting(name = "leader.imbalance.check.interval.seconds", doc = "How often the controller checks whether "
            + "partitions are led by their preferred replica.")
    @Min(1)
    long leaderImbalanceCheckIntervalSeconds = 300;

    @Setting(name = "auto.leader.rebalance.enable", doc = "Move leadership back to the preferred replica when it is "
            + "in the ISR, at each leader.imbalance.check.interval.seconds.")
    boolean autoLeaderRebalanceEnable = true;

    @Setting(name = "num.partitions", doc = "Partitions of a topic created without a count (or auto-created).")
    @Min(1)
    int numPartitions = 1;

    @Setting(name = "default.replication.factor", doc = "Replicas of a topic created without a replication factor.")
    @Min(1)
    int defaultReplicationFactor = 1;

    @Setting(name = "auto.create.topics.enable", doc = "Create a topic when a producer or consumer first asks for "
            + "its metadata, as Kafka does.")
    boolean autoCreateTopicsEnable = true;

    @Setting(name = "offsets.topic.num.partitions", doc = "Partitions of the internal __consumer_offsets topic.")
    @Min(1)
    @Max(1000)
    int offsetsTopicNumPartitions = 50;

    @Setting(name = "transaction.state.log.num.partitions", doc = "Partitions of the internal __transaction_state "
            + "topic, where the transaction coordinator keeps each transactional id's state.")
    @Min(1)
    @Max(1000)
    int transactionStateLogNumPartitions = 50;

    @Setting(name = "transaction.max.timeout.ms", doc = "Largest transaction.timeout.ms a producer may ask for; "
            + "a larger one fails InitProducerId with INVALID_TRANSACTION_TIMEOUT.")
    @Min(1)
    int transactionMaxTimeoutMs = 900_000;

    @Setting(name = "transaction.abort.timed.out.transaction.cleanup.interval.ms", doc = "How often the "
            + "transaction coordinator aborts transactions open longer than their timeout.")
    @Min(1)
    long transactionAbortTimedOutTransactionCleanupIntervalMs = 10_000;

    @Setting(name = "delay.topic.num.partitions", doc = "Partitions of the internal __millrace_delayed topic that "
            + "durable delayed delivery reads (see dev.millrace.protocol.delay.DelayedDelivery).")
    @Min(1)
    @Max(1000)
    int delayTopicNumPartitions = 4;

    @Setting(name = "delay.max.ms", doc = "Longest delay a delayed record may ask for; a Produce to "
            + "__millrace_delayed with a due time further ahead is refused. Default 365 days.")
    @Min(1)
    long delayMaxMs = 365L * 24 * 3600 * 1000;

    @Setting(name = "delay.cache.bytes", doc = "Memory for copies of pending delayed records, so that delivering "
            + "them needs no log read; records beyond it are read again when due.")
    @Min(0)
    long delayCacheBytes = 64L * 1024 * 1024;

    @Setting(name = "group.initial.rebalance.delay.ms", doc = "How long the first rebalance of an empty consumer "
            + "group waits for more members to join.")
    @Min(0)
    int groupInitialRebalanceDelayMs = 3000;

    @Setting(name = "group.share.record.lock.duration.ms", doc = "How long a record acquired by a share-group "
            + "member stays locked to it before it becomes available to others again.")
    @Min(1000)
    @Max(3_600_000)
    long shareRecordLockDurationMs = 30_000;

    @Setting(name = "group.share.partition.max.record.locks", doc = "Most in-flight records (from the start "
            + "offset to the end offset) of one share-partition. Kafka's default is 2000; Millrace's is higher "
            + "because a JMS queue consumer may hold any number of unacknowledged messages (CLIENT_ACKNOWLEDGE, "
            + "transactions) and a queue must not stop at this many.")
    @Min(100)
    @Max(100_000)
    int sharePartitionMaxRecordLocks = 50_000;

    @Setting(name = "group.share.selective.window.records", doc = "Most in-flight records of one share-partition for "
            + "members with a JMS selector, which pass over the records they do not match; at least "
            + "group.share.partition.max.record.locks.")
    @Min(100)
    @Max(10_000_000)
    int shareSelectiveWindowRecords = 1_000_000;

    @Setting(name = "group.share.delivery.count.limit", doc = "Deliveries after which a released or expired "
            + "record is archived (and copied to the topic's millrace.share.dlq.topic, if set). A share group "
            + "can override it with the group config share.delivery.count.limit (1..32767).")
    @Min(1)
    @Max(100)
    int shareDeliveryCountLimit = 5;

    @Setting(name = "group.share.session.timeout.ms", doc = "A share-group member that sends no heartbeat for "
            + "this long is removed and its records are released.")
    @Min(1000)
    int shareSessionTimeoutMs = 45_000;

    @Setting(name = "group.share.heartbeat.interval.ms", doc = "How often share-group members heartbeat.")
    @Min(100)
    int shareHeartbeatIntervalMs = 5000;

    @Setting(name = "group.share.auto.offset.reset", doc = "Where a share group starts on a partition it never "
            + "read: latest (Kafka's default) or earliest (queue semantics: messages sent before the first "
            + "consumer are delivered).")
    @Pattern(regexp = "earliest|latest")
    String shareAutoOffsetReset = "latest";

    @Setting(name = "group.share.redelivery.backoff.ms", doc = "A released or expired record becomes available "
            + "again after this times 2^(delivery count - 1); 0 redelivers at once. A share group can override it "
            + "with the group config share.redelivery.backoff.ms.")
    @Min(0)
    long shareRedeliveryBackoffMs = 0;

    @Setting(name = "group.share.redelivery.backoff.max.ms", doc = "Cap of the redelivery backoff; group config "
            + "share.redelivery.backoff.max.ms overrides it per share group.")
    @Min(0)
    long shareRedeliveryBackoffMaxMs = 60_000;

    @Setting(name = "message.max.bytes", doc = "Largest record batch accepted, unless a topic sets max.message.bytes.")
    @Min(0)
    int messageMaxBytes = 1024 * 1024 + 12 + 49;

    @Setting(name = "socket.request.max.bytes", doc = "Largest request a client may send, in bytes (the frame's size "
            + "prefix); a larger or negative size prefix closes the connection as soon as it is read, with a log line "
            + "naming the client. Kafka's default, 100 MiB.")
    @Min(1024)
    int socketRequestMaxBytes = 100 * 1024 * 1024;

    @Setting(name = "max.connections", doc = "Most client connections open at once on the listener; a connection "
            + "beyond it is closed as soon as it is accepted, with a log line naming the client (Kafka blocks "
            + "accepting instead). Default: no limit (2147483647), as Kafka.")
    @Min(1)
    int maxConnections = Integer.MAX_VALUE;

    @Setting(name = "max.connections.per.ip", doc = "Most connections open at once from one client IP address; "
            + "one beyond it is closed as soon as it is accepted, with a log line naming the client, as Kafka does. "
            + "Default: no limit (2147483647), as Kafka.")
    @Min(1)
    int maxConnectionsPerIp = Integer.MAX_VALUE;

    @Setting(name = "connections.max.idle.ms", doc = "A connection that sends nothing and is sent nothing for this "
            + "long, while none of its requests is being handled, is closed (a client that stopped reading its "
            + "responses included). Kafka's default, 10 minutes; kafka-clients close their own idle connections "
            + "after 9.")
    @Min(1)
    long connectionsMaxIdleMs = 600_000;

    @Setting(name = "num.io.threads", doc = "Threads that handle requests.")
    @Min(1)
    @Max(256)
    int numIoThreads = 8;

    @Setting(name = "log.segment.bytes", doc = "Default segment.bytes of topics.")
    @Min(1024)
    int logSegmentBytes = 1024 * 1024 * 1024;

    @Setting(name = "log.retention.ms", doc = "Default retention.ms of topics; -1 keeps data forever.")
    @Min(-1)
    long logRetentionMs = 7L * 24 * 3600 * 1000;

    @Setting(name = "log.retention.bytes", doc = "Default retention.bytes of topics; -1 sets no limit.")
    @Min(-1)
    long logRetentionBytes = -1;

    @Setting(name = "log.flush.interval.messages", doc = "Default flush.messages of topics (1 = fsync every append).")
    @Min(1)
    long logFlushIntervalMessages = Long.MAX_VALUE;

    @Setting(name = "log.cleanup.policy", doc = "Default cleanup.policy of topics: delete, compact or both.")
    @Pattern(regexp = "(delete|compact)(,(delete|compact))?")
    String logCleanupPolicy = "delete";

    @Setting(name = "log.maintenance.interval.ms", doc = "How often retention, compaction, time-based flushes and "
            + "checkpoints run.")
    @Min(100)
    long logMaintenanceIntervalMs = 30_000;

    @Setting(name = "log.recovery.flush.interval.ms", doc = "Millrace's own (Kafka has none): a partition with appends "
            + "that were not fsynced for this long is fsynced, and a producer-state snapshot written, by the next "
            + "maintenance run, so that recovery after a crash (SIGKILL, power loss) reads and replays only what came "
            + "after it instead of the whole log. Acknowledged records do not depend on it (replication and "
            + "flush.messages do).")
    @Min(1)
    long logRecoveryFlushIntervalMs = LogMaintenance.DEFAULT_RECOVERY_FLUSH_INTERVAL_MS;

    /**
     * Settings under {@code listener.name.<listener>.} ({@code <mechanism>.sasl.jaas.config}, {@code ssl.client.auth}),
     * as given;
     * checked by {@link ListenerSettings}.
     */
    final Map<String, String> listenerOverrides = new java.util.TreeMap<>();

    /** The resolved listeners ({@link ListenerSettings}); set by the loader. */
    java.util.List<ListenerSettings.Listener> resolvedListeners = java.util.List.of();

    /**
     * The Kafka-protocol listeners, in the order given: from {@code listeners}, or the single PLAINTEXT listener of
     * {@code host}/{@code port}/{@code advertised.*} when {@code listeners} is empty.
     */
    public java.util.List<ListenerSettings.Listener> listeners() {
        return resolvedListeners;
    }

    /** The listener other nodes reach this one on ({@code inter.broker.listener.name}). */
    public ListenerSettings.Listener interBrokerListener() {
        return ListenerSettings.interBroker(this);
    }

    /** The TLS settings ({@code ssl.*}) as Kafka names them, for SSL and SASL_SSL listeners. */
    public Map<String, String> sslSettings() {
        Map<String, String> ssl = new java.util.LinkedHashMap<>();
        ssl.put("ssl.keystore.location", sslKeystoreLocation);
        ssl.put("ssl.keystore.password", sslKeystorePassword);
        ssl.put("ssl.keystore.type", sslKeystoreType.toUpperCase(java.util.Locale.ROOT));
        ssl.put("ssl.key.password", sslKeyPassword);
        ssl.put("ssl.truststore.location", sslTruststoreLocation);
        ssl.put("ssl.truststore.password", sslTruststorePassword);
        ssl.put("ssl.truststore.type", sslTruststoreType.toUpperCase(java.util.Locale.ROOT));
        ssl.put("ssl.enabled.protocols", sslEnabledProtocols);
        ssl.put("ssl.client.auth", sslClientAuth);
        return ssl;
    }

    /**
     * The {@code ssl.client.auth} of listener {@code listener}: its {@code listener.name.<listener>.ssl.client.auth}
     * when set, else the broker's.
     */
    public String sslClientAuth(String listener) {
        return listenerOverrides.getOrDefault(ListenerSettings.LISTENER_PREFIX
                + listener.toLowerCase(java.util.Locale.ROOT) + ".ssl.client.auth", sslClientAuth);
    }

    /** The TLS settings of listener {@code listener}: {@link #sslSettings()} with its own client authentication. */
    public Map<String, String> sslSettings(String listener) {
        Map<String, String> ssl = sslSettings();
        ssl.put("ssl.client.auth", sslClientAuth(listener));
        return ssl;
    }

    /** {@code ssl.engine}: auto, jdk or openssl, lower case. */
    public String sslEngine() {
        return sslEngine.trim().toLowerCase(java.util.Locale.ROOT);
    }

    public String sslPrincipalMappingRules() {
        return sslPrincipalMappingRules;
    }

    /**
     * The SASL mechanism of the node's own connections to other nodes: {@code sasl.mechanism.inter.broker.protocol},
     * else the first of {@code sasl.enabled.mechanisms}; upper case; empty when neither is set.
     */
    public String saslMechanismInterBrokerProtocol() {
        String named = saslMechanismInterBrokerProtocol.trim().toUpperCase(java.util.Locale.ROOT);
        if (!named.isEmpty()) {
            return named;
        }
        java.util.List<String> enabled = saslEnabledMechanisms();
        return enabled.isEmpty() ? "" : enabled.get(0);
    }

    /** The mechanisms of {@code sasl.enabled.mechanisms}, upper case, in the order given. */
    public java.util.List<String> saslEnabledMechanisms() {
        return ListenerSettings.split(saslEnabledMechanisms).stream()
                .map(m -> m.toUpperCase(java.util.Locale.ROOT)).toList();
    }

    /**
     * The JAAS configuration of {@code mechanism} (lower case, e.g. {@code plain}) on {@code listener}: the value of
     * {@code listener.name.<listener lower case>.<mechanism>.sasl.jaas.config}, if set.
     */
    public Optional<String> listenerJaasConfig(String listener, String mechanism) {
        return Optional.ofNullable(listenerOverrides.get(ListenerSettings.LISTENER_PREFIX
                + listener.toLowerCase(java.util.Locale.ROOT) + "." + mechanism.toLowerCase(java.util.Locale.ROOT)
                + ".sasl.jaas.config"));
    }

    public int nodeId() {
        return nodeId;
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    /** The host clients should use: {@code advertised.host}, or the listener's host when that is empty. */
    public String advertisedHost() {
        return advertisedHost.isBlank() ? host : advertisedHost;
    }

    /** The port clients should use: {@code advertised.port}, or {@code boundPort} when that is 0. */
    public int advertisedPort(int boundPort) {
        return advertisedPort == 0 ? boundPort : advertisedPort;
    }

    public File dataDir() {
        return new File(dataDir);
    }

    public String controllerHost() {
        return controllerHost;
    }

    public int controllerPort() {
        return controllerPort;
    }

    /** The voters' setting as given, empty in embedded mode. */
    public String controllerQuorumVotersSetting() {
        return controllerQuorumVoters;
    }

    /**
     * True when {@code controller.quorum.voters} is set: this node is one node of a cluster, a voter or
     * (see {@link #isQuorumVoter()}) a broker only.
     */
    /** Whether the metadata quorum's nodes use mutual TLS between them ({@code controller.quorum.security.protocol}). */
    public boolean quorumUsesTls() {
        return controllerQuorumSecurityProtocol.trim().equalsIgnoreCase("SSL");
    }

    public boolean isClusterMode() {
        return !controllerQuorumVoters.isBlank();
    }

    /**
     * Whether this node votes in the metadata quorum: always in embedded mode; in cluster mode when
     * {@code node.id} is one of {@code controller.quorum.voters}. Otherwise it is a broker only, whose
     * metadata learner listens on {@link #controllerHost()}:{@link #controllerPort()}.
     */
    public boolean isQuorumVoter() {
        return quorumVoters().contains(nodeId);
    }

    /**
     * The metadata quorum's voters: the parsed {@code controller.quorum.voters}, or in embedded mode the
     * single entry {@code node.id@controller.host:controller.port}. A voter listens on
     * {@code quorumVoters().address(nodeId())}, which is also {@link #controllerHost()}:{@link #controllerPort()};
     * a broker-only node is not in this list.
     */
    public QuorumVoters quorumVoters() {
        return isClusterMode() ? QuorumVoters.parse(controllerQuorumVoters)
                : QuorumVoters.single(nodeId, controllerHost, controllerPort);
    }

    /** The rack of {@code broker.rack}, empty when none is set. */
    public Optional<String> brokerRack() {
        return brokerRack.isBlank() ? Optional.empty() : Optional.of(brokerRack.trim());
    }

    public int minInsyncReplicas() {
        return minInsyncReplicas;
    }

    public long replicaLagTimeMaxMs() {
        return replicaLagTimeMaxMs;
    }

    public int replicaFetchWaitMaxMs() {
        return replicaFetchWaitMaxMs;
    }

    public int brokerSessionTimeoutMs() {
        return brokerSessionTimeoutMs;
    }

    public int controllerQuorumStartTimeoutMs() {
        return controllerQuorumStartTimeoutMs;
    }

    public int brokerHeartbeatIntervalMs() {
        return brokerHeartbeatIntervalMs;
    }

    public boolean uncleanLeaderElectionEnable() {
        return uncleanLeaderElectionEnable;
    }

    public long leaderImbalanceCheckIntervalSeconds() {
        return leaderImbalanceCheckIntervalSeconds;
    }

    public boolean autoLeaderRebalanceEnable() {
        return autoLeaderRebalanceEnable;
    }

    public int numPartitions() {
        return numPartitions;
    }

    public short defaultReplicationFactor() {
        return (short) defaultReplicationFactor;
    }

    /** Whether requests are checked against the ACLs ({@code authorizer.class.name} is set). */
    public boolean authorizerEnabled() {
        return authorizerClassName != null && !authorizerClassName.isBlank();
    }

    public String superUsers() {
        return superUsers;
    }

    public boolean allowEveryoneIfNoAclFound() {
        return allowEveryoneIfNoAclFound;
    }

    /** {@code quota.window.num}: the samples client quotas are measured over. */
    public int quotaWindowNum() {
        return quotaWindowNum;
    }

    /** {@code quota.window.size.seconds}: one client quota sample. */
    public int quotaWindowSizeSeconds() {
        return quotaWindowSizeSeconds;
    }

    public boolean autoCreateTopicsEnable() {
        return autoCreateTopicsEnable;
    }

    public int offsetsTopicNumPartitions() {
        return offsetsTopicNumPartitions;
    }

    public int delayTopicNumPartitions() {
        return delayTopicNumPartitions;
    }

    public long delayCacheBytes() {
        return delayCacheBytes;
    }

    public long delayMaxMs() {
        return delayMaxMs;
    }

    public int transactionStateLogNumPartitions() {
        return transactionStateLogNumPartitions;
    }

    public int transactionMaxTimeoutMs() {
        return transactionMaxTimeoutMs;
    }

    public long transactionAbortTimedOutTransactionCleanupIntervalMs() {
        return transactionAbortTimedOutTransactionCleanupIntervalMs;
    }

    public int groupInitialRebalanceDelayMs() {
        return groupInitialRebalanceDelayMs;
    }

    /** The share-group settings ({@code group.share.*}). */
    public ShareGroupConfig shareGroupConfig() {
        return new ShareGroupConfig(shareRecordLockDurationMs, sharePartitionMaxRecordLocks, shareDeliveryCountLimit,
                shareSessionTimeoutMs, shareHeartbeatIntervalMs, ShareGroupConfig.parseEarliest(shareAutoOffsetReset),
                shareRedeliveryBackoffMs, Math.max(shareRedeliveryBackoffMs, shareRedeliveryBackoffMaxMs),
                Math.max(shareSelectiveWindowRecords, sharePartitionMaxRecordLocks));
    }

    public int socketRequestMaxBytes() {
        return socketRequestMaxBytes;
    }

    /** The listener's connection limits: socket.request.max.bytes, max.connections(.per.ip), connections.max.idle.ms. */
    public ConnectionLimits connectionLimits() {
        return new ConnectionLimits(socketRequestMaxBytes, maxConnections, maxConnectionsPerIp, connectionsMaxIdleMs);
    }

    public int numIoThreads() {
        return numIoThreads;
    }

    public long logMaintenanceIntervalMs() {
        return logMaintenanceIntervalMs;
    }

    public long logRecoveryFlushIntervalMs() {
        return logRecoveryFlushIntervalMs;
    }

    /** The topic config defaults these broker settings imply, as LogConfig settings. */
    public Map<String, Object> logDefaults() {
        Map<String, Object> defaults = new HashMap<>();
        defaults.put(LogConfig.SEGMENT_BYTES, logSegmentBytes);
        defaults.put(LogConfig.RETENTION_MS, logRetentionMs);
        defaults.put(LogConfig.RETENTION_BYTES, logRetentionBytes);
        defaults.put(LogConfig.FLUSH_MESSAGES, logFlushIntervalMessages);
        defaults.put(LogConfig.CLEANUP_POLICY, logCleanupPolicy);
        defaults.put(LogConfig.MAX_MESSAGE_BYTES, messageMaxBytes);
        return defaults;
    }
}
