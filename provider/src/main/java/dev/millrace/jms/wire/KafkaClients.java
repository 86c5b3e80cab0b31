package dev.millrace.jms.wire;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import dev.millrace.jms.ConnectionSettings;

/**
 * Builds the kafka-clients objects a connection uses from its {@link ConnectionSettings}: the one place that names
 * Kafka client configs. (Queue consumers use Millrace's own share-group client, {@link ShareFetcher}.) Stateless.
 */
public final class KafkaClients {

    private KafkaClients() {
    }

    /**
     * The shared admin client: each request waits {@code requestTimeoutMs}; a call retries (kafka-clients' own
     * retries: lost connections, NOT_COORDINATOR, NOT_LEADER_OR_FOLLOWER, ...) for {@code blockingTimeoutMs}, which
     * covers the failover window.
     */
    public static Admin admin(ConnectionSettings s, String clientId) {
        Map<String, Object> c = common(s, clientId);
        c.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, s.blockingTimeoutMs());
        c.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, s.requestTimeoutMs());
        return withOwnClassLoader(() -> Admin.create(c));
    }

    /**
     * A producer for one delivery mode; {@code acks} is that mode's setting. Idempotent when acks is all.
     * Failover: kafka-clients retries a batch (lost connection, NOT_LEADER_OR_FOLLOWER, which refreshes the metadata
     * and follows the new leader) until {@code delivery.timeout.ms} = {@code requestTimeoutMs + failoverTimeoutMs}
     * (see {@link #applyTimeouts}); only then does the send fail.
     */
    public static KafkaProducer<byte[], byte[]> producer(ConnectionSettings s, String clientId, String acks) {
        Map<String, Object> c = common(s, clientId);
        c.put(ProducerConfig.ACKS_CONFIG, acks);
        boolean all = "all".equals(acks) || "-1".equals(acks);
        c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, all);
        c.put(ProducerConfig.LINGER_MS_CONFIG, s.lingerMs());
        c.put(ProducerConfig.BATCH_SIZE_CONFIG, s.batchSizeBytes());
        applyTimeouts(c, s);
        c.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, all ? 5 : 1);
        return withOwnClassLoader(() -> new KafkaProducer<>(c, new ByteArraySerializer(), new ByteArraySerializer()));
    }

    /**
     * A transactional producer (acks=all, idempotent) for one transacted session; {@code transactionTimeoutMs} is
     * how long the broker lets a transaction of a crashed client stay open before aborting it.
     */
    public static KafkaProducer<byte[], byte[]> transactionalProducer(ConnectionSettings s, String clientId,
                                                                      String transactionalId,
                                                                      int transactionTimeoutMs) {
        return transactionalProducer(s, clientId, transactionalId, transactionTimeoutMs, -1);
    }

    /**
     * A transactional producer as above whose retries start after {@code retryBackoffMs} (kafka-clients' default of
     * 100 ms when negative), growing to kafka-clients' maximum of 1 s.
     */
    public static KafkaProducer<byte[], byte[]> transactionalProducer(ConnectionSettings s, String clientId,
                                                                      String transactionalId,
                                                                      int transactionTimeoutMs,
                                                                      int retryBackoffMs) {
        Map<String, Object> c = common(s, clientId);
        if (retryBackoffMs >= 0) {
            c.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, retryBackoffMs);
        }
        c.put(ProducerConfig.ACKS_CONFIG, "all");
        c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        c.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        c.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, transactionTimeoutMs);
        c.put(ProducerConfig.LINGER_MS_CONFIG, s.lingerMs());
        c.put(ProducerConfig.BATCH_SIZE_CONFIG, s.batchSizeBytes());
        applyTimeouts(c, s);
        return withOwnClassLoader(() -> new KafkaProducer<>(c, new ByteArraySerializer(), new ByteArraySerializer()));
    }

    /**
     * A producer's timeouts: each produce request waits {@code requestTimeoutMs} (kafka-clients needs it below the
     * delivery timeout); a record is retried (retries unlimited, the kafka-clients default) for
     * {@code delivery.timeout.ms} = {@code blockingTimeoutMs}, and {@code max.block.ms} (metadata for a new
     * destination, a full buffer, transaction calls: initTransactions, commitTransaction) is the same bound.
     */
    static void applyTimeouts(Map<String, Object> c, ConnectionSettings s) {
        int deliveryTimeoutMs = Math.max(s.blockingTimeoutMs(), 1000);
        c.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, s.blockingTimeoutMs());
        c.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, deliveryTimeoutMs);
        c.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.max(1, Math.min(s.requestTimeoutMs(),
                deliveryTimeoutMs - s.lingerMs() - 1)));
    }

    /** A consumer reading committed records; {@code groupId} null for a consumer without a group. */
    public static KafkaConsumer<byte[], byte[]> consumer(ConnectionSettings s, String clientId, String groupId) {
        return consumer(s, clientId, groupId, null);
    }

    /**
     * As {@link #consumer(ConnectionSettings, String, String)}, with {@code rack} as {@code client.rack} (a JMS
     * selector for the broker to filter fetches by, {@code MemberSelector}); null for none.
     */
    public static KafkaConsumer<byte[], byte[]> consumer(ConnectionSettings s, String clientId, String groupId,
                                                         String rack) {
        Map<String, Object> c = common(s, clientId);
        if (rack != null) {
            c.put(ConsumerConfig.CLIENT_RACK_CONFIG, rack);
        }
        if (groupId != null) {
            c.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        }
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, s.prefetch());
        c.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, s.blockingTimeoutMs()); // commitSync rides out failover
        c.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, s.requestTimeoutMs());
        return withOwnClassLoader(() -> new KafkaConsumer<>(c, new ByteArrayDeserializer(),
                new ByteArrayDeserializer()));
    }

    /**
     * Runs {@code create} with this class's class loader as the thread's context class loader. kafka-clients loads
     * the classes its configs name (defaults included, such as {@code sasl.oauthbearer.jwt.retriever.class}) through
     * the context class loader when there is one; in an application server that is the calling application's, which
     * does not see kafka-clients when the provider is deployed in a resource adapter (.rar), and the client's config
     * class then fails to initialize for good.
     */
    private static <T> T withOwnClassLoader(java.util.function.Supplier<T> create) {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(KafkaClients.class.getClassLoader());
        try {
            return create.get();
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    /**
     * The configs every client gets, with the connection's security ({@code securityProtocol}, SASL credentials,
     * TLS stores). {@code enable.metrics.push} is off: Millrace brokers do not serve client
     * telemetry (KIP-714's GetTelemetrySubscriptions), so a client with it on only registers the telemetry reporter's
     * metrics at start for nothing, on the path of every new consumer.
     */
    static Map<String, Object> common(ConnectionSettings s, String clientId) {
        Map<String, Object> c = new HashMap<>();
        c.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, s.brokers());
        c.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId);
        c.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);
        c.put(AdminClientConfig.ENABLE_METRICS_PUSH_CONFIG, false);
        c.putAll(s.security().kafkaConfigs());
        return c;
    }
}
