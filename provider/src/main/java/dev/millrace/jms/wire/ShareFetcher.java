package dev.millrace.jms.wire;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
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

    private final KafkaShareConsumer<byte[], byte[]> consumer;
    private final String topic;
    private final Set<ConsumerRecord<byte[], byte[]>> unsettled = java.util.Collections.newSetFromMap(
            new IdentityHashMap<>());

    /** Whether acceptances were made since the last poll (which carries or follows them). Fetcher thread. */
    private boolean uncommitted;

    public ShareFetcher(ConnectionSettings settings, String clientId, String topic, String groupId)
            throws JMSException {
        super("millrace-share-" + topic, settings.requestTimeoutMs());
        this.topic = topic;
        this.consumer = KafkaClients.shareConsumer(settings, clientId, groupId, settings.prefetch());
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
    protected boolean readyToPoll() {
        return unsettled.isEmpty();
    }

    @Override
    protected Collection<Delivery> poll(Duration timeout) {
        uncommitted = false; // the poll carries them
        List<Delivery> out = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(timeout)) {
            unsettled.add(r);
            Optional<Short> count = r.deliveryCount();
            out.add(new Delivery(r, count.map(Short::intValue).orElse(1)));
        }
        return out;
    }

    /** Accepts the records: they will not be delivered again. {@code sync} waits for the broker's answer. */
    public void acknowledge(List<Delivery> deliveries, boolean sync) throws JMSException {
        settle(deliveries, AcknowledgeType.ACCEPT, sync);
    }

    /**
     * Accepts the records without waiting: the acceptance goes to the broker at once ({@code sendNow}) or with the
     * next fetch, which kafka-clients sends only once every record of the last one is settled. A consumer that crashes
     * before the broker has it gets the records again, with a raised delivery count.
     */
    public void acknowledgeLater(List<Delivery> deliveries, boolean sendNow) {
        submit(() -> {
            boolean any = false;
            for (Delivery d : deliveries) {
                if (unsettled.remove(d.record)) {
                    consumer.acknowledge(d.record, AcknowledgeType.ACCEPT);
                    any = true;
                }
            }
            if (any) {
                uncommitted = true;
                if (sendNow) {
                    consumer.commitAsync();
                }
            }
        });
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
            return awake(consumer::commitSync);
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
                // close alone does not reliably deliver acceptances still waiting for a poll, nor wait for those
                // sent asynchronously; a synchronous commit on the same connection follows them
                awake(() -> consumer.commitSync(Duration.ofMillis(timeoutMs()))); // close() may have woken it
            } catch (KafkaException e) {
                // the broker releases what it did not get once the locks expire
            }
        }
        consumer.close(Duration.ofSeconds(5));
    }
}
