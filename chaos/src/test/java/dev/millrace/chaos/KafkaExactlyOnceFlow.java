package dev.millrace.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * A Kafka read-process-write loop with exactly-once: input records (acks=all) are read by a read_committed consumer
 * group, copied to the output topic and their offsets committed in one transaction. A verifier reads the output with
 * read_committed. Promises checked: every acknowledged input appears in the output exactly once: none lost, no
 * duplicate (a committed transaction fully visible, an aborted one not at all). On any error the loop aborts and
 * starts again from the committed offsets with a new producer (which fences the old one).
 */
final class KafkaExactlyOnceFlow implements Flow {

    static final String INPUT = "chaos-eos-in";
    static final String OUTPUT = "chaos-eos-out";

    private final String bootstrap;
    private final long periodMs;
    private final Ledger ledger = new Ledger();
    private KafkaProducer<String, String> inputProducer;
    private Pacer pacer;
    private ConsumerLoop processor;
    private ConsumerLoop verifier;
    private KafkaConsumer<String, String> verifierConsumer;
    private Processor state;
    private volatile long restarts;

    KafkaExactlyOnceFlow(String bootstrap, long periodMs) {
        this.bootstrap = bootstrap;
        this.periodMs = periodMs;
    }

    @Override
    public String name() {
        return "kafka exactly-once";
    }

    /** The processing loop's clients, replaced after an error. Used by the processor thread only. */
    private final class Processor {
        final KafkaConsumer<String, String> consumer;
        final KafkaProducer<String, String> producer;

        Processor() {
            consumer = new KafkaConsumer<>(KafkaClients.consumer(bootstrap, "chaos-eos-processor"));
            consumer.subscribe(List.of(INPUT));
            Map<String, Object> config = new HashMap<>(KafkaClients.producer(bootstrap));
            config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "chaos-eos-tx");
            config.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 30_000);
            producer = new KafkaProducer<>(config);
            producer.initTransactions();
        }

        void close() {
            consumer.close(Duration.ofSeconds(2));
            producer.close(Duration.ofSeconds(2));
        }
    }

    @Override
    public void start() {
        inputProducer = new KafkaProducer<>(KafkaClients.producer(bootstrap));
        processor = new ConsumerLoop("chaos-eos-processor", this::process);
        Map<String, Object> verifierConfig = new HashMap<>(KafkaClients.consumer(bootstrap, "unused"));
        verifierConfig.remove(ConsumerConfig.GROUP_ID_CONFIG);
        verifierConsumer = new KafkaConsumer<>(verifierConfig);
        verifier = new ConsumerLoop("chaos-eos-verifier", this::verify);
        pacer = new Pacer("chaos-eos-input", periodMs, seq -> {
            String id = "e-" + seq;
            inputProducer.send(new ProducerRecord<>(INPUT, id, id), (metadata, error) -> {
                if (error == null) {
                    ledger.acknowledged(id);
                } else {
                    ledger.sendFailed();
                }
            });
        });
    }

    private void process() {
        if (state == null) {
            state = new Processor();
        }
        try {
            ConsumerRecords<String, String> records = state.consumer.poll(Duration.ofMillis(500));
            if (records.isEmpty()) {
                return;
            }
            state.producer.beginTransaction();
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            for (ConsumerRecord<String, String> record : records) {
                state.producer.send(new ProducerRecord<>(OUTPUT, record.key(), record.value()));
                offsets.put(new TopicPartition(record.topic(), record.partition()),
                        new OffsetAndMetadata(record.offset() + 1));
            }
            state.producer.sendOffsetsToTransaction(offsets, state.consumer.groupMetadata());
            state.producer.commitTransaction();
        } catch (RuntimeException e) {
            restarts++;
            Processor failed = state;
            state = null;
            try {
                failed.producer.abortTransaction();
            } catch (RuntimeException ignored) {
                // fenced or broken: the next producer's initTransactions aborts what is left open
            }
            failed.close();
            throw e;
        }
    }

    private void verify() {
        if (verifierConsumer.assignment().isEmpty()) {
            List<PartitionInfo> partitions = verifierConsumer.partitionsFor(OUTPUT, Duration.ofSeconds(10));
            List<TopicPartition> all = new ArrayList<>();
            partitions.forEach(p -> all.add(new TopicPartition(OUTPUT, p.partition())));
            verifierConsumer.assign(all);
            verifierConsumer.seekToBeginning(all);
        }
        for (ConsumerRecord<String, String> record : verifierConsumer.poll(Duration.ofMillis(500))) {
            ledger.delivered(record.value(), false);
        }
    }

    @Override
    public void stopSending() throws Exception {
        pacer.close();
        inputProducer.flush();
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
        return ledger.summary() + " processorRestarts=" + restarts + " lastError=" + processor.lastError();
    }

    @Override
    public List<String> violations() {
        List<String> violations = new ArrayList<>();
        if (ledger.lost() > 0) {
            violations.add(ledger.lost() + " acknowledged inputs missing from the output, e.g. " + ledger.someLost());
        }
        long duplicates = ledger.flaggedRedeliveries() + ledger.unflaggedRedeliveries();
        if (duplicates > 0) {
            violations.add(duplicates + " inputs copied to the output more than once");
        }
        return violations;
    }

    @Override
    public void close() throws Exception {
        if (pacer != null) {
            pacer.close();
        }
        if (processor != null) {
            processor.close();
        }
        if (verifier != null) {
            verifier.close();
        }
        if (state != null) {
            state.close();
        }
        if (verifierConsumer != null) {
            verifierConsumer.close(Duration.ofSeconds(2));
        }
        if (inputProducer != null) {
            inputProducer.close(Duration.ofSeconds(5));
        }
    }
}
