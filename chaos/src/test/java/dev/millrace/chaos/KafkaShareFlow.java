package dev.millrace.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;

/**
 * A share group (Kafka's queues): an {@code acks=all} producer and two {@code KafkaShareConsumer}s that accept every
 * record and commit after each poll. Promises checked: every acknowledged record is delivered; a record whose
 * acceptance was committed is never delivered again; a record delivered again says so (its delivery count is above
 * one).
 */
final class KafkaShareFlow implements Flow {

    static final String TOPIC = "chaos-share";

    private final String bootstrap;
    private final long periodMs;
    private final Ledger ledger = new Ledger();
    private final List<ConsumerLoop> consumers = new ArrayList<>();
    private final List<KafkaShareConsumer<String, String>> clients = new ArrayList<>();
    private KafkaProducer<String, String> producer;
    private Pacer pacer;
    /**
     * Per record id, each delivery ("c{consumer} p{partition}@{offset} dc={delivery count}") and each committed
     * acceptance ("commit ok"), in order: the report names them for a record delivered again after its commit, so
     * that a redelivery of the same offset (share-partition state) can be told from a second copy at another offset
     * (the producer).
     */
    private final Map<String, List<String>> history = new java.util.concurrent.ConcurrentHashMap<>();

    KafkaShareFlow(String bootstrap, long periodMs) {
        this.bootstrap = bootstrap;
        this.periodMs = periodMs;
    }

    @Override
    public String name() {
        return "kafka share group";
    }

    @Override
    public void start() {
        producer = new KafkaProducer<>(KafkaClients.producer(bootstrap));
        for (int i = 0; i < 2; i++) {
            Map<String, Object> config = new HashMap<>(KafkaClients.consumer(bootstrap, "chaos-share-readers"));
            config.remove(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
            config.remove(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG);
            config.remove(ConsumerConfig.ISOLATION_LEVEL_CONFIG);
            config.remove(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG);
            config.remove(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG);
            config.put("share.acknowledgement.mode", "explicit");
            KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(config);
            consumer.subscribe(List.of(TOPIC));
            clients.add(consumer);
            int index = i;
            consumers.add(new ConsumerLoop("chaos-share-consumer-" + i, () -> poll(index, consumer)));
        }
        pacer = new Pacer("chaos-share-producer", periodMs, seq -> {
            String id = "s-" + seq;
            producer.send(new ProducerRecord<>(TOPIC, id, id), (metadata, error) -> {
                if (error == null) {
                    ledger.acknowledged(id);
                } else {
                    ledger.sendFailed();
                }
            });
        });
    }

    private void poll(int index, KafkaShareConsumer<String, String> consumer) {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
        if (records.isEmpty()) {
            return;
        }
        Map<TopicPartition, List<String>> byPartition = new HashMap<>();
        for (ConsumerRecord<String, String> record : records) {
            note(record.value(), "c" + index + " p" + record.partition() + "@" + record.offset() + " dc="
                    + record.deliveryCount().map(String::valueOf).orElse("?"));
            ledger.delivered(record.value(), record.deliveryCount().map(c -> c > 1).orElse(false));
            byPartition.computeIfAbsent(new TopicPartition(record.topic(), record.partition()), k -> new ArrayList<>())
                    .add(record.value());
            consumer.acknowledge(record, AcknowledgeType.ACCEPT);
        }
        Map<TopicIdPartition, Optional<KafkaException>> results = consumer.commitSync(Duration.ofSeconds(30));
        results.forEach((tp, error) -> {
            if (error.isEmpty()) {
                List<String> ids = byPartition.getOrDefault(tp.topicPartition(), List.of());
                ids.forEach(id -> note(id, "c" + index + " commit ok"));
                ledger.consumed(ids);
            }
        });
    }

    private void note(String id, String event) {
        history.computeIfAbsent(id, k -> java.util.Collections.synchronizedList(new ArrayList<>())).add(event);
    }

    /** The histories of up to five records delivered again after a committed acceptance. */
    private String redeliveredAfterCommit() {
        List<String> out = new ArrayList<>();
        history.forEach((id, events) -> {
            synchronized (events) {
                int commit = events.indexOf(events.stream().filter(e -> e.endsWith("commit ok")).findFirst()
                        .orElse(""));
                if (commit >= 0 && events.subList(commit, events.size()).stream().anyMatch(e -> e.contains(" dc="))
                        && out.size() < 5) {
                    out.add(id + " " + events);
                }
            }
        });
        return out.toString();
    }

    /** The histories of up to five records delivered more than once with a delivery count of 1. */
    private String unflaggedRedeliveries() {
        List<String> out = new ArrayList<>();
        history.forEach((id, events) -> {
            synchronized (events) {
                if (events.stream().filter(e -> e.endsWith(" dc=1")).count() > 1 && out.size() < 5) {
                    out.add(id + " " + events);
                }
            }
        });
        return out.toString();
    }

    @Override
    public void stopSending() throws Exception {
        pacer.close();
        producer.flush();
    }

    @Override
    public boolean drained() {
        return ledger.allAcknowledgedDelivered();
    }

    @Override
    public long acknowledged() {
        return ledger.acknowledgedCount();
    }

    @Override
    public String report() {
        return ledger.summary() + " consumerErrors=" + consumers.stream().mapToLong(ConsumerLoop::errors).sum()
                + (ledger.deliveredAfterFinalConsumption() > 0 ? " againAfterCommit=" + redeliveredAfterCommit() : "")
                + (ledger.unflaggedRedeliveries() > 0 ? " againWithCount1=" + unflaggedRedeliveries() : "");
    }

    @Override
    public List<String> violations() {
        List<String> violations = new ArrayList<>();
        if (ledger.lost() > 0) {
            violations.add(ledger.lost() + " acknowledged records never delivered, e.g. " + ledger.someLost());
        }
        if (ledger.deliveredAfterFinalConsumption() > 0) {
            violations.add(ledger.deliveredAfterFinalConsumption() + " records delivered again after their acceptance "
                    + "was committed");
        }
        if (ledger.unflaggedRedeliveries() > 0) {
            violations.add(ledger.unflaggedRedeliveries() + " records delivered again with a delivery count of 1");
        }
        return violations;
    }

    @Override
    public void close() throws Exception {
        if (pacer != null) {
            pacer.close();
        }
        for (ConsumerLoop loop : consumers) {
            loop.close();
        }
        for (KafkaShareConsumer<String, String> consumer : clients) {
            consumer.close(Duration.ofSeconds(5));
        }
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
        }
    }
}
