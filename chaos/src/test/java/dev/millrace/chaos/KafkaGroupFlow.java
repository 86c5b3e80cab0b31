package dev.millrace.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A Kafka consumer group: an idempotent {@code acks=all} producer and two group members that commit after each poll.
 * Promises checked: every acknowledged record is consumed; a record whose offset commit returned is never delivered
 * again (committed offsets never go back). Redeliveries of records not yet committed are allowed (at least once) and
 * counted.
 */
final class KafkaGroupFlow implements Flow {

    static final String TOPIC = "chaos-group";

    private final String bootstrap;
    private final long periodMs;
    private final Ledger ledger = new Ledger();
    private final List<ConsumerLoop> consumers = new ArrayList<>();
    private final List<KafkaConsumer<String, String>> clients = new ArrayList<>();
    private KafkaProducer<String, String> producer;
    private Pacer pacer;
    /**
     * What happened to each record, for the report of one delivered again after its commit returned: each delivery
     * (member, partition, offset, the member's generation, the time) and each commit that returned.
     */
    private final Map<String, List<String>> history = new java.util.concurrent.ConcurrentHashMap<>();

    KafkaGroupFlow(String bootstrap, long periodMs) {
        this.bootstrap = bootstrap;
        this.periodMs = periodMs;
    }

    @Override
    public String name() {
        return "kafka consumer group";
    }

    @Override
    public void start() {
        producer = new KafkaProducer<>(KafkaClients.producer(bootstrap));
        for (int i = 0; i < 2; i++) {
            KafkaConsumer<String, String> consumer = new KafkaConsumer<>(KafkaClients.consumer(bootstrap,
                    "chaos-group-readers"));
            consumer.subscribe(List.of(TOPIC));
            clients.add(consumer);
            int index = i;
            consumers.add(new ConsumerLoop("chaos-group-consumer-" + i, () -> poll(consumer, index)));
        }
        pacer = new Pacer("chaos-group-producer", periodMs, seq -> {
            String id = "g-" + seq;
            producer.send(new ProducerRecord<>(TOPIC, id, id), (metadata, error) -> {
                if (error == null) {
                    ledger.acknowledged(id);
                } else {
                    ledger.sendFailed();
                }
            });
        });
    }

    private void poll(KafkaConsumer<String, String> consumer, int index) {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
        if (records.isEmpty()) {
            return;
        }
        List<String> ids = new ArrayList<>();
        int generation = consumer.groupMetadata().generationId();
        for (ConsumerRecord<String, String> record : records) {
            note(record.value(), "c" + index + " p" + record.partition() + "@" + record.offset() + " gen " + generation
                    + " at " + System.currentTimeMillis());
            ledger.delivered(record.value(), false);
            ids.add(record.value());
        }
        consumer.commitSync(Duration.ofSeconds(30));
        long committedAt = System.currentTimeMillis();
        ids.forEach(id -> note(id, "c" + index + " commit ok at " + committedAt));
        ledger.consumed(ids);
    }

    private void note(String id, String event) {
        history.computeIfAbsent(id, k -> java.util.Collections.synchronizedList(new ArrayList<>())).add(event);
    }

    /** The histories of up to five records delivered again after a commit of them returned. */
    private String deliveredAfterCommit() {
        List<String> out = new ArrayList<>();
        history.forEach((id, events) -> {
            synchronized (events) {
                int commit = -1;
                for (int i = 0; i < events.size() && commit < 0; i++) {
                    commit = events.get(i).contains(" commit ok") ? i : -1;
                }
                if (commit >= 0 && events.subList(commit, events.size()).stream().anyMatch(e -> e.contains(" gen "))
                        && out.size() < 5) {
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
        return ledger.summary() + " consumerErrors=" + consumers.stream().mapToLong(ConsumerLoop::errors).sum();
    }

    @Override
    public List<String> violations() {
        List<String> violations = new ArrayList<>();
        if (ledger.lost() > 0) {
            violations.add(ledger.lost() + " acknowledged records never consumed, e.g. " + ledger.someLost());
        }
        if (ledger.deliveredAfterFinalConsumption() > 0) {
            violations.add(ledger.deliveredAfterFinalConsumption() + " records delivered again after their offset "
                    + "commit returned (committed offsets went back), e.g. " + deliveredAfterCommit());
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
        for (KafkaConsumer<String, String> consumer : clients) {
            consumer.close(Duration.ofSeconds(5));
        }
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
        }
    }
}
