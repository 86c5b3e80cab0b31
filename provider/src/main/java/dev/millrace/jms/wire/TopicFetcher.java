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
import dev.millrace.protocol.selector.MemberSelector;
import dev.millrace.protocol.selector.RecordSelectorContext;
import dev.millrace.protocol.selector.Selector;
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
 * equals it are skipped (and count as acknowledged). With a selector, so are records it does not match.
 *
 * <p><b>Decision: topic selectors are evaluated here, in the provider.</b> The stock KafkaConsumer has no field that
 * would carry a selector to the Fetch path, and a subscription is one reader, so filtering here hands the application
 * the same messages as the broker would, at the price of fetching the unmatched ones. Filtering in the broker's Fetch
 * (a Millrace Fetch extension, or a member-selector-like convention for consumer groups) is left for later. A durable
 * subscription's skipped records are committed with the others, once nothing handed out before them is unacknowledged.
 *
 * <p>Partitions added to the topic after the consumer started are not read. Thread-safe (see {@link RecordFetcher}).
 */
public final class TopicFetcher extends RecordFetcher {

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final String topic;
    private final String groupId;
    private final byte[] noLocalConnectionId;
    private final Selector selector;
    private final RecordSelectorContext selectorContext = new RecordSelectorContext();
    private final String commitMetadata;
    private final Map<TopicPartition, Map<Long, Integer>> redeliveries = new HashMap<>();
    private final Map<TopicPartition, Long> committed = new HashMap<>();
    /** The offset after the last record handed to the application, per partition. Fetcher thread. */
    private final Map<TopicPartition, Long> handedOut = new HashMap<>();

    /**
     * Starts reading; returns once positions are fixed, so every record written afterwards is read. A durable
     * subscription whose group has committed offsets resumes from them.
     */
    public TopicFetcher(ConnectionSettings settings, String clientId, String topic, String groupId,
                        byte[] noLocalConnectionId) throws JMSException {
        this(settings, clientId, topic, groupId, noLocalConnectionId, null, "");
    }

    /**
     * @param selector       only records it matches are delivered (null: all); the others are skipped like noLocal
     *                       ones
     * @param commitMetadata the metadata of every offset commit of a durable subscription (its noLocal and selector,
     *                       see {@link DurableSubscriptions})
     */
    public TopicFetcher(ConnectionSettings settings, String clientId, String topic, String groupId,
                        byte[] noLocalConnectionId, Selector selector, String commitMetadata) throws JMSException {
        super("millrace-fetch-" + topic, settings.blockingTimeoutMs() + settings.requestTimeoutMs());
        this.topic = topic;
        this.groupId = groupId;
        this.noLocalConnectionId = noLocalConnectionId;
        this.selector = selector == null || selector.matchesAll() ? null : selector;
        this.commitMetadata = commitMetadata == null ? "" : commitMetadata;
        // the broker filters by the selector the rack id carries, so unselected messages do not cross the network;
        // the fetcher checks again (a broker without selective fetches sends everything)
        this.consumer = KafkaClients.consumer(settings, clientId, groupId,
                this.selector == null ? null : MemberSelector.encode(this.selector.text()));
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
            start.put(tp, new OffsetAndMetadata(position, commitMetadata));
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
            Integer count = redeliveries.getOrDefault(tp, Map.of()).get(r.offset());
            int deliveryCount = count == null ? 1 : count;
            if (isLocal(r) || !matches(r, deliveryCount)) {
                skipped.put(tp, new OffsetAndMetadata(r.offset() + 1, commitMetadata));
                continue;
            }
            out.add(new Delivery(r, deliveryCount));
            handedOut.put(tp, r.offset() + 1);
        }
        // a skipped record counts as acknowledged, but committing past it must not acknowledge records handed out
        // before it and not acknowledged yet: only partitions whose handed-out records are all committed
        skipped.keySet().removeIf(tp -> handedOut.getOrDefault(tp, -1L) > committed.getOrDefault(tp, -1L));
        if (groupId != null && !skipped.isEmpty()) {
            awake(() -> {
                consumer.commitSync(skipped);
                return null;
            });
            skipped.forEach((tp, o) -> committed.merge(tp, o.offset(), Math::max));
        }
        return out;
    }

    private boolean isLocal(ConsumerRecord<byte[], byte[]> r) {
        if (noLocalConnectionId == null) {
            return false;
        }
        var h = r.headers().lastHeader(JmsHeaders.CONNECTION_ID);
        return h != null && Arrays.equals(h.value(), noLocalConnectionId);
    }

    /** Whether the subscriber's selector matches {@code r}; a record that is not a valid JMS message does not. */
    private boolean matches(ConsumerRecord<byte[], byte[]> r, int deliveryCount) {
        if (selector == null) {
            return true;
        }
        try {
            return selector.matches(selectorContext.reset(r.headers(), r.key(), r.timestamp(), deliveryCount));
        } catch (RuntimeException malformed) {
            return false;
        }
    }

    /** The consumer group of a durable subscription, null for a non-durable subscriber. */
    public String groupId() {
        return groupId;
    }

    /**
     * The positions after {@code deliveries}, as a transaction commits them for a durable subscription (empty for a
     * non-durable subscriber). Computed only: nothing is committed here.
     */
    public Map<TopicPartition, OffsetAndMetadata> offsetsAfter(List<Delivery> deliveries) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        if (groupId == null) {
            return offsets;
        }
        for (Delivery d : deliveries) {
            TopicPartition tp = new TopicPartition(topic, d.partition());
            OffsetAndMetadata pending = offsets.get(tp);
            if (pending == null || d.offset() + 1 > pending.offset()) {
                offsets.put(tp, new OffsetAndMetadata(d.offset() + 1, commitMetadata));
            }
        }
        return offsets;
    }

    /** Commits the positions after {@code deliveries} (for a durable subscription; nothing otherwise). */
    public void acknowledge(List<Delivery> deliveries, boolean sync) throws JMSException {
        acknowledge(deliveries, sync, true);
    }

    /** Records that a transaction committed the positions after {@code deliveries} ({@link #offsetsAfter}). */
    public void committedInTransaction(List<Delivery> deliveries) throws JMSException {
        acknowledge(deliveries, true, false);
    }

    private void acknowledge(List<Delivery> deliveries, boolean sync, boolean commit) throws JMSException {
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
                    offsets.put(tp, new OffsetAndMetadata(next, commitMetadata));
                }
                Map<Long, Integer> counts = redeliveries.get(tp);
                if (counts != null) {
                    counts.keySet().removeIf(offset -> offset <= d.offset());
                }
            }
            if (!offsets.isEmpty()) {
                if (!commit) {
                    offsets.forEach((tp, o) -> committed.put(tp, o.offset()));
                } else if (sync) {
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
