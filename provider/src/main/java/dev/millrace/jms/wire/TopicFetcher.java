package dev.millrace.jms.wire;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.protocol.jms.JmsHeaders;
import jakarta.jms.JMSException;

/**
 * Reads a topic for one subscriber with a plain {@link KafkaConsumer} on all of the topic's partitions (assigned, no
 * group membership):
 *
 * <ul>
 *   <li>non-durable ({@code groupId} null): from the end of each partition at creation; nothing is committed;
 *   <li>durable: offsets committed under {@code groupId}; a subscription without committed offsets starts at the end
 *       and commits that position at once, so it exists (and keeps messages for itself) from creation on.
 * </ul>
 *
 * <p>Acknowledging commits the offset after the acknowledged record; {@link #rewind} seeks back so unacknowledged
 * records come again, their delivery count raised locally (Kafka keeps no per-record count for consumer groups:
 * records a durable subscription resumes with after a reconnect are delivered with count 1 again). With {@code noLocalConnectionId} set, records whose {@link JmsHeaders#CONNECTION_ID} header
 * equals it are skipped (and count as acknowledged).
 *
 * <p>Partitions added to the topic after the consumer started are not read. Thread-safe (see {@link RecordFetcher}).
 */
public final class TopicFetcher extends RecordFetcher {

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final String topic;
    private final String groupId;
    private final byte[] noLocalConnectionId;
    private final Map<TopicPartition, Map<Long, Integer>> redeliveries = new HashMap<>();
    private final Map<TopicPartition, Long> committed = new HashMap<>();

    /**
     * Starts reading; returns once positions are fixed, so every record written afterwards is read. A durable
     * subscription whose group has committed offsets resumes from them.
     */
    public TopicFetcher(ConnectionSettings settings, String clientId, String topic, String groupId,
                        byte[] noLocalConnectionId) throws JMSException {
        super("millrace-fetch-" + topic, settings.requestTimeoutMs());
        this.topic = topic;
        this.groupId = groupId;
        this.noLocalConnectionId = noLocalConnectionId;
        this.consumer = KafkaClients.consumer(settings, clientId, groupId);
        try {
            start(this::init);
        } catch (JMSException e) {
            close();
            throw e;
        }
    }

    private Void init() {
        List<PartitionInfo> infos = consumer.partitionsFor(topic);
        long deadline = System.nanoTime() + Duration.ofMillis(timeoutMs()).toNanos();
        while (infos.isEmpty() && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
            infos = consumer.partitionsFor(topic);
        }
        if (infos.isEmpty()) {
            throw new org.apache.kafka.common.errors.UnknownTopicOrPartitionException("topic " + topic
                    + " has no partitions");
        }
        List<TopicPartition> partitions = infos.stream().map(p -> new TopicPartition(topic, p.partition())).toList();
        consumer.assign(partitions);
        Map<TopicPartition, OffsetAndMetadata> offsets = groupId == null ? Map.of()
                : consumer.committed(Set.copyOf(partitions));
        List<TopicPartition> fromEnd = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            OffsetAndMetadata o = offsets.get(tp);
            if (o == null) {
                fromEnd.add(tp);
            } else {
                consumer.seek(tp, o.offset());
                committed.put(tp, o.offset());
            }
        }
        if (!fromEnd.isEmpty()) {
            consumer.seekToEnd(fromEnd); // an empty list would mean every partition
        }
        Map<TopicPartition, OffsetAndMetadata> start = new HashMap<>();
        for (TopicPartition tp : fromEnd) {
            long position = consumer.position(tp);
            start.put(tp, new OffsetAndMetadata(position));
            committed.put(tp, position);
        }
        if (groupId != null && !start.isEmpty()) {
            consumer.commitSync(start);
        }
        return null;
    }

    @Override
    protected Collection<Delivery> poll(Duration timeout) {
        List<Delivery> out = new ArrayList<>();
        Map<TopicPartition, OffsetAndMetadata> skipped = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(timeout)) {
            TopicPartition tp = new TopicPartition(r.topic(), r.partition());
            if (noLocalConnectionId != null) {
                var h = r.headers().lastHeader(JmsHeaders.CONNECTION_ID);
                if (h != null && Arrays.equals(h.value(), noLocalConnectionId)) {
                    skipped.put(tp, new OffsetAndMetadata(r.offset() + 1));
                    continue;
                }
            }
            Integer count = redeliveries.getOrDefault(tp, Map.of()).get(r.offset());
            out.add(new Delivery(r, count == null ? 1 : count));
        }
        if (groupId != null && out.isEmpty() && !skipped.isEmpty()) {
            awake(() -> {
                consumer.commitSync(skipped);
                return null;
            });
        }
        return out;
    }

    /** Commits the positions after {@code deliveries} (for a durable subscription; nothing otherwise). */
    public void acknowledge(List<Delivery> deliveries, boolean sync) throws JMSException {
        if (groupId == null || deliveries.isEmpty()) {
            return;
        }
        call("acknowledge", () -> {
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            for (Delivery d : deliveries) {
                TopicPartition tp = new TopicPartition(topic, d.partition());
                long next = d.offset() + 1;
                OffsetAndMetadata pending = offsets.get(tp);
                if (next > committed.getOrDefault(tp, -1L) && (pending == null || next > pending.offset())) {
                    offsets.put(tp, new OffsetAndMetadata(next));
                }
                Map<Long, Integer> counts = redeliveries.get(tp);
                if (counts != null) {
                    counts.keySet().removeIf(offset -> offset <= d.offset());
                }
            }
            if (!offsets.isEmpty()) {
                if (sync) {
                    awake(() -> {
                        consumer.commitSync(offsets);
                        return null;
                    });
                } else {
                    consumer.commitAsync(offsets, null);
                }
                offsets.forEach((tp, o) -> committed.put(tp, o.offset()));
            }
            return null;
        });
    }

    /**
     * Delivers {@code unacknowledged} again (and everything buffered after them): seeks each partition back to its
     * first unacknowledged record and raises those records' delivery counts.
     */
    public void rewind(List<Delivery> unacknowledged) throws JMSException {
        call("recover", () -> {
            List<Delivery> buffered = drainBuffer();
            Map<Integer, List<Delivery>> byPartition = new HashMap<>();
            for (Delivery d : unacknowledged) {
                byPartition.computeIfAbsent(d.partition(), p -> new ArrayList<>()).add(d);
            }
            for (Delivery d : buffered) {
                byPartition.computeIfAbsent(d.partition(), p -> new ArrayList<>()).add(d);
            }
            for (Delivery d : unacknowledged) {
                redeliveries.computeIfAbsent(new TopicPartition(topic, d.partition()), tp -> new HashMap<>())
                        .put(d.offset(), d.deliveryCount() + 1);
            }
            byPartition.forEach((partition, ds) -> consumer.seek(new TopicPartition(topic, partition),
                    ds.stream().mapToLong(Delivery::offset).min().getAsLong()));
            return null;
        });
    }

    /** The partitions and their next offsets, for diagnostics. */
    public String positions() throws JMSException {
        return call("positions", () -> consumer.assignment().stream()
                .map(tp -> tp.partition() + "@" + consumer.position(tp)).collect(Collectors.joining(",")));
    }

    @Override
    protected void wakeupClient() {
        consumer.wakeup();
    }

    @Override
    protected void closeClient() {
        consumer.close(java.time.Duration.ofSeconds(5));
    }
}
