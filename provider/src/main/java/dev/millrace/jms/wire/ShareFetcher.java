package dev.millrace.jms.wire;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.JmsExceptions;
import jakarta.jms.JMSException;

/**
 * Reads a queue through its share group with a {@link KafkaShareConsumer} in explicit acknowledgement mode: each
 * record is acquired by this consumer under the broker's lock until it is accepted ({@link #acknowledge}) or
 * released ({@link #release}, also what closing does with unsettled records). JMSXDeliveryCount is the record's
 * delivery count as the broker keeps it.
 *
 * <p>kafka-clients requires every record of one poll to be settled before the next poll, so at most
 * {@code maxPollRecords} messages are acquired and unsettled at a time: a CLIENT_ACKNOWLEDGE session that holds
 * that many unacknowledged messages of a queue receives no more from it until it acknowledges or recovers.
 *
 * <p>Thread-safe (see {@link RecordFetcher}).
 */
public final class ShareFetcher extends RecordFetcher {

    /**
     * How long an AUTO_ACKNOWLEDGE acceptance may wait for the rest of its poll to be settled, so that it goes with
     * the next ShareFetch rather than in a commit of its own.
     */
    static final long ACCEPT_DELAY_MS = 5;

    private final KafkaShareConsumer<byte[], byte[]> consumer;
    private final String topic;
    private final String clientId;
    private final String groupId;
    private final Set<ConsumerRecord<byte[], byte[]>> unsettled = java.util.Collections.newSetFromMap(
            new IdentityHashMap<>());

    /** Whether acceptances were made without a commit since. Fetcher thread. */
    private boolean uncommitted;
    /** Whether those acceptances should go at once (AUTO_ACKNOWLEDGE). Fetcher thread. */
    private boolean flushWanted;
    /** When the oldest acceptance not yet sent was made ({@link System#nanoTime}). Fetcher thread. */
    private long oldestUnsentNanos;
    /**
     * Records of the last poll not yet passed to {@link #acknowledgeLater} (set by each poll, lowered by the
     * application's threads): the acceptance that brings it to zero settles the poll and wakes the fetcher to poll
     * again. Only a hint: records settled another way leave it above zero, which costs at most one
     * {@value #ACCEPT_DELAY_MS} ms wait.
     */
    private final AtomicInteger outstanding = new AtomicInteger();
    /**
     * Whether the fetcher thread will look at its quiet commands again within {@value #ACCEPT_DELAY_MS} ms (it waits
     * for an AUTO_ACKNOWLEDGE acceptance's deadline), so that an acceptance need not wake it. Written by the fetcher
     * thread before it checks for quiet commands; read by an application thread after it queued one: one of the two
     * sees the other (both are volatile accesses), so no acceptance waits for the fetcher's long idle wait.
     */
    private volatile boolean watching;

    public ShareFetcher(ConnectionSettings settings, String clientId, String topic, String groupId)
            throws JMSException {
        this(settings, clientId, topic, groupId, (String) null);
    }

    /**
     * @param rack the member's rack id: a selector for the broker to apply at acquisition
     *             ({@link dev.millrace.protocol.selector.MemberSelector}), or null
     */
    public ShareFetcher(ConnectionSettings settings, String clientId, String topic, String groupId, String rack)
            throws JMSException {
        this(settings, clientId, topic, groupId,
                KafkaClients.shareConsumer(settings, clientId, groupId, settings.prefetch(), rack));
    }

    /**
     * As above, with the consumer already constructed ({@link PendingShareConsumer}, with {@code settings}'s prefetch
     * as its {@code max.poll.records}); this fetcher owns it from here on, and subscribes it.
     */
    public ShareFetcher(ConnectionSettings settings, String clientId, String topic, String groupId,
                        KafkaShareConsumer<byte[], byte[]> consumer) throws JMSException {
        super("millrace-share-" + topic, settings.requestTimeoutMs());
        this.topic = topic;
        this.clientId = clientId;
        this.groupId = groupId;
        this.consumer = consumer;
        try {
            start(() -> {
                consumer.subscribe(List.of(topic));
                return null;
            });
        } catch (JMSException e) {
            close();
            throw e;
        }
    }

    @Override
    protected Collection<Delivery> poll(Duration timeout) {
        List<Delivery> out = new ArrayList<>();
        ConsumerRecords<byte[], byte[]> records = consumer.poll(timeout);
        // the acceptances made since the last commit went with this poll's ShareFetch (piggy-backed)
        uncommitted = false;
        flushWanted = false;
        outstanding.set(records.count());
        for (ConsumerRecord<byte[], byte[]> r : records) {
            unsettled.add(r);
            Optional<Short> count = r.deliveryCount();
            out.add(new Delivery(r, count.map(Short::intValue).orElse(1)));
        }
        // Priority, best effort (JMS 3.1 6.2.9): among the records of one fetch, higher JMSPriority first;
        // the sort is stable, so messages of one priority keep their order. Only queues reorder: each
        // record is acknowledged on its own, whereas a topic subscription commits offsets in order.
        out.sort(Comparator.comparingInt(Delivery::priority).reversed());
        return out;
    }

    /** Accepts the records: they will not be delivered again. {@code sync} waits for the broker's answer. */
    public void acknowledge(List<Delivery> deliveries, boolean sync) throws JMSException {
        settle(deliveries, AcknowledgeType.ACCEPT, sync);
    }

    /**
     * Makes the acceptance of {@code deliveries} part of the open transaction of {@code transactionalId}
     * (TxnShareAcknowledge, one request per partition), then settles them in the client (an ACCEPT the broker
     * ignores for held records) so that polling goes on. The transaction's commit accepts them, its abort
     * releases them.
     */
    public void acceptInTransaction(BrokerExtensions extensions, String transactionalId, List<Delivery> deliveries)
            throws JMSException {
        Map<Integer, List<Long>> byPartition = new java.util.TreeMap<>();
        for (Delivery d : deliveries) {
            byPartition.computeIfAbsent(d.record.partition(), p -> new ArrayList<>()).add(d.record.offset());
        }
        for (Map.Entry<Integer, List<Long>> e : byPartition.entrySet()) {
            extensions.holdForTransaction(transactionalId, groupId, clientId, topic, e.getKey(), e.getValue());
        }
        settle(deliveries, AcknowledgeType.ACCEPT, true);
    }

    /**
     * Accepts the records without waiting. The fetcher thread sends the acceptances with the next poll's ShareFetch
     * (which the broker applies before it acquires anything) once every record of the last poll is settled, so they
     * cost no round trip of their own; {@code sendNow} (AUTO_ACKNOWLEDGE) acceptances do not wait for that longer than
     * {@value #ACCEPT_DELAY_MS} ms and then go in one synchronous commit with those that came meanwhile (an
     * application still holding prefetched records); DUPS_OK_ACKNOWLEDGE's wait for the poll. Acknowledgements are never
     * sent concurrently with each other or with a poll. A consumer that dies before the broker has them gets the
     * records again, with a raised delivery count.
     *
     * <p>The acceptance is queued for the fetcher thread without waking it when it will look anyway within
     * {@value #ACCEPT_DELAY_MS} ms ({@link #watching}) and records of the poll are still outstanding: waking a parked
     * thread for each message was a tenth of a receiving thread's time. The acceptance that settles the poll, and any
     * made while the fetcher is not watching, wake it.
     */
    public void acknowledgeLater(List<Delivery> deliveries, boolean sendNow) {
        boolean settlesThePoll = outstanding.addAndGet(-deliveries.size()) <= 0;
        submitQuietly(() -> {
            for (Delivery d : deliveries) {
                if (unsettled.remove(d.record)) {
                    consumer.acknowledge(d.record, AcknowledgeType.ACCEPT);
                    if (!uncommitted) {
                        oldestUnsentNanos = System.nanoTime();
                    }
                    uncommitted = true;
                    flushWanted |= sendNow;
                }
            }
        });
        if (settlesThePoll || !watching) {
            wake();
        }
    }

    @Override
    protected void afterCommands() {
        if (uncommitted && flushWanted && !unsettled.isEmpty() && idleWaitMs() <= 0) {
            uncommitted = false;
            flushWanted = false;
            awake(consumer::commitSync); // per-partition errors: the broker redelivers on lock expiry
        }
    }

    /**
     * Until the oldest AUTO_ACKNOWLEDGE acceptance not yet sent is {@value #ACCEPT_DELAY_MS} ms old: within that time
     * the rest of the poll is usually settled too, and its acceptances then go with the next ShareFetch.
     */
    @Override
    protected long idleWaitMs() {
        if (uncommitted && flushWanted) {
            watching = true;
            return ACCEPT_DELAY_MS - (System.nanoTime() - oldestUnsentNanos) / 1_000_000;
        }
        watching = false;
        return 100; // RecordFetcher does not wait while quiet commands are queued (one may have missed watching)
    }

    @Override
    protected boolean readyToPoll() {
        return unsettled.isEmpty(); // pending acceptances go with the poll
    }

    /** Releases the records: the broker delivers them again (to any consumer), their delivery count raised. */
    public void release(List<Delivery> deliveries) throws JMSException {
        settle(deliveries, AcknowledgeType.RELEASE, true);
    }

    private void settle(List<Delivery> deliveries, AcknowledgeType type, boolean sync) throws JMSException {
        if (deliveries.isEmpty()) {
            return;
        }
        Map<TopicIdPartition, Optional<KafkaException>> result = call(type + " " + deliveries.size()
                + " record(s) of " + topic, () -> {
            for (Delivery d : deliveries) {
                if (unsettled.remove(d.record)) {
                    consumer.acknowledge(d.record, type);
                }
            }
            if (!sync) {
                consumer.commitAsync();
                return Map.of();
            }
            Map<TopicIdPartition, Optional<KafkaException>> committed = awake(consumer::commitSync);
            uncommitted = false;
            flushWanted = false;
            return committed;
        });
        for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : result.entrySet()) {
            if (e.getValue().isPresent()) {
                throw JmsExceptions.fromClient(type + " on " + e.getKey(), e.getValue().get());
            }
        }
    }

    @Override
    protected void wakeupClient() {
        consumer.wakeup();
    }

    @Override
    protected void closeClient() {
        boolean settle = uncommitted || !unsettled.isEmpty();
        for (ConsumerRecord<byte[], byte[]> r : unsettled) {
            consumer.acknowledge(r, AcknowledgeType.RELEASE);
        }
        unsettled.clear();
        if (settle) {
            try {
                // close alone did not reliably deliver acknowledgements still pending in the client
                awake(() -> consumer.commitSync(Duration.ofMillis(timeoutMs()))); // close() may have woken it
            } catch (KafkaException e) {
                // the broker releases what it did not get once the locks expire
            }
        }
        consumer.close(Duration.ofSeconds(5));
    }
}
