package dev.millrace.broker.delay;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.protocol.delay.DelayedDelivery;

/**
 * Rounds through a transactional kafka-clients producer that bootstraps at the cluster, so targets led by any broker
 * can be written: {@code beginTransaction}, the copies to their target partitions and the marks to the delay
 * partitions (all {@code acks=all}), {@code commitTransaction}. The transaction coordinator is whichever broker
 * leads the id's {@code __transaction_state} partition.
 *
 * <p>Failures: any exception in a round aborts it if the producer still can, and closes the producer in every case;
 * the next {@link #ensureReady} creates a new one, whose {@code initTransactions} completes or aborts whatever the
 * old one left, so that no earlier round of the id is undecided once it returns. The transaction timeout bounds how
 * long a round left open by a broker that died holds back the delay partitions whose marks it wrote (their new
 * leader waits for it to be decided, see {@link DelayedDeliveryService}) if nobody decides it sooner; the other brokers
 * do, once the dead one is fenced ({@link DeadBrokerRounds}).
 *
 * <p>Threading: as {@link RoundWriter}.
 */
public final class ProducerRoundWriter implements RoundWriter {

    private static final Logger log = LoggerFactory.getLogger(ProducerRoundWriter.class);

    private final String transactionalId;
    private final Supplier<Producer<byte[], byte[]>> factory;
    private final DelayLogs logs;
    private volatile Producer<byte[], byte[]> producer;
    private volatile long producerId = -1;

    ProducerRoundWriter(String transactionalId, Supplier<Producer<byte[], byte[]>> factory, DelayLogs logs) {
        this.transactionalId = transactionalId;
        this.factory = factory;
        this.logs = logs;
    }

    /**
     * A writer whose producer bootstraps at {@code bootstrap} with {@code transactionalId}; a round that takes
     * longer than {@code transactionTimeoutMs} is aborted by the coordinator. {@code security} holds the
     * kafka-clients settings of the listener it connects to ({@code security.protocol}, {@code ssl.*},
     * {@code sasl.*}).
     */
    public static ProducerRoundWriter create(String bootstrap, String transactionalId, int transactionTimeoutMs,
                                             Map<String, Object> security, DelayLogs logs) {
        Properties p = producerConfig(bootstrap, transactionalId, transactionTimeoutMs, security);
        return new ProducerRoundWriter(transactionalId, () -> new KafkaProducer<>(p, new ByteArraySerializer(),
                new ByteArraySerializer()), logs);
    }

    /**
     * Initialises another broker's delivery transactional id through a short-lived producer bootstrapping at
     * {@code bootstrap}: the coordinator aborts a round left open under it and bumps its epoch
     * ({@link DeadBrokerRounds}), connecting with the kafka-clients settings {@code security}. Blocks up to
     * {@code transactionTimeoutMs}.
     */
    public static DeadBrokerRounds.Fencer fencer(String bootstrap, int transactionTimeoutMs,
                                                 Map<String, Object> security) {
        return transactionalId -> {
            Properties p = producerConfig(bootstrap, transactionalId, transactionTimeoutMs, security);
            p.put(ProducerConfig.CLIENT_ID_CONFIG, transactionalId + "-fencer");
            Producer<byte[], byte[]> fencing = new KafkaProducer<>(p, new ByteArraySerializer(),
                    new ByteArraySerializer());
            try {
                fencing.initTransactions();
            } finally {
                fencing.close(Duration.ofSeconds(1));
            }
        };
    }

    private static Properties producerConfig(String bootstrap, String transactionalId, int transactionTimeoutMs,
                                             Map<String, Object> security) {
        Properties p = new Properties();
        p.putAll(security);
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, transactionTimeoutMs);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 16 << 20);
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 64L << 20);
        int requestTimeoutMs = Math.max(1_000, transactionTimeoutMs / 2);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, requestTimeoutMs);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, requestTimeoutMs);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (long) transactionTimeoutMs);
        p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 50);
        p.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, 5_000);
        return p;
    }

    @Override
    public void ensureReady() {
        if (producer != null) {
            return;
        }
        producerId = -1;
        Producer<byte[], byte[]> created = factory.get();
        try {
            created.initTransactions();
        } catch (RuntimeException e) {
            created.close(Duration.ZERO);
            throw e;
        }
        producer = created;
    }

    @Override
    public boolean ready() {
        return producer != null;
    }

    @Override
    public String transactionalId() {
        return transactionalId;
    }

    /**
     * The producer id, learnt from the first mark batch a round wrote (kafka-clients does not expose it; the delay
     * partitions of a round are led, so hosted, here); -1 until then, and the service then treats open rounds of
     * its own as another's (it waits for their markers).
     */
    @Override
    public long producerId() {
        return producerId;
    }

    private void learnProducerId(TopicPartition delayPartition, long offset) {
        logs.log(delayPartition).ifPresent(l -> {
            for (RecordBatch batch : l.read(offset, 1, true).records().batches()) {
                if (batch.isTransactional()) {
                    producerId = batch.producerId();
                }
                return;
            }
        });
    }

    @Override
    public Map<TopicPartition, Long> write(DeliveryRound round) throws Exception {
        Producer<byte[], byte[]> current = producer;
        if (current == null) {
            throw new IllegalStateException("the round writer is not initialised");
        }
        try {
            current.beginTransaction();
            for (Map.Entry<TopicPartition, List<DeliveryRound.Copy>> copies : round.copies().entrySet()) {
                TopicPartition target = copies.getKey();
                for (DeliveryRound.Copy copy : copies.getValue()) {
                    current.send(new ProducerRecord<>(target.topic(), target.partition(), copy.timestamp(),
                            copy.key(), copy.value(), List.of(copy.headers())));
                }
            }
            Map<TopicPartition, Future<RecordMetadata>> firstMarks = new LinkedHashMap<>();
            for (Map.Entry<TopicPartition, List<Long>> marks : round.marks().entrySet()) {
                TopicPartition tp = marks.getKey();
                for (long offset : marks.getValue()) {
                    List<Header> headers = new ArrayList<>(List.of(new RecordHeader(DelayedDelivery.DONE_OFFSET,
                            DelayedDelivery.encodeLong(offset))));
                    Future<RecordMetadata> sent = current.send(new ProducerRecord<>(tp.topic(), tp.partition(),
                            round.nowMs(), null, null, headers));
                    firstMarks.putIfAbsent(tp, sent);
                }
            }
            current.flush();
            Map<TopicPartition, Long> markBatches = new LinkedHashMap<>();
            for (Map.Entry<TopicPartition, Future<RecordMetadata>> first : firstMarks.entrySet()) {
                markBatches.put(first.getKey(), first.getValue().get(0, TimeUnit.MILLISECONDS).offset());
            }
            if (producerId < 0 && !markBatches.isEmpty()) {
                Map.Entry<TopicPartition, Long> first = markBatches.entrySet().iterator().next();
                learnProducerId(first.getKey(), first.getValue());
            }
            if (!round.stillLed()) {
                throw new IllegalStateException("a delay partition of the round is no longer led here");
            }
            current.commitTransaction();
            return markBatches;
        } catch (Exception e) {
            try {
                current.abortTransaction();
            } catch (RuntimeException abortFailed) {
                log.debug("Could not abort the delivery round: {}", abortFailed.toString());
            }
            current.close(Duration.ZERO);
            producer = null;
            throw e;
        }
    }

    @Override
    public void close() {
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
            producer = null;
        }
    }
}
