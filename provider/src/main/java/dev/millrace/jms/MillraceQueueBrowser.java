package dev.millrace.jms;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

import dev.millrace.jms.message.MillraceMessage;
import dev.millrace.jms.message.RecordMessageMapper;
import dev.millrace.jms.wire.KafkaClients;
import dev.millrace.protocol.jms.JmsRecord;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;

/**
 * Browses a queue without acquiring anything: each enumeration is a plain {@link KafkaConsumer} without a group that
 * reads every partition from its log start up to the end it had when the enumeration began.
 *
 * <p><b>Approximation:</b> kafka-clients offers no way to read the share group's start offset or which records are
 * already accepted, so the enumeration also shows messages that were consumed and acknowledged but are still
 * retained in the log, and messages currently acquired by consumers. Expired messages are left out. Messages are
 * read-only, with JMSXDeliveryCount 1.
 *
 * <p>Used by one thread at a time; {@link #close} may come from another.
 */
public class MillraceQueueBrowser implements QueueBrowser {

    private final MillraceSession session;
    private final Queue queue;
    private final List<KafkaConsumer<byte[], byte[]>> open = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    MillraceQueueBrowser(MillraceSession session, Queue queue) {
        this.session = session;
        this.queue = queue;
    }

    private void checkClosed() throws IllegalStateException {
        if (closed) {
            throw new IllegalStateException("the browser is closed");
        }
        session.checkClosed();
    }

    @Override
    public Queue getQueue() throws JMSException {
        checkClosed();
        return queue;
    }

    @Override
    public String getMessageSelector() throws JMSException {
        checkClosed();
        return null;
    }

    @Override
    public Enumeration<Message> getEnumeration() throws JMSException {
        checkClosed();
        MillraceConnection connection = session.connection();
        String topic = queue.getQueueName();
        KafkaConsumer<byte[], byte[]> consumer = KafkaClients.consumer(connection.settings(),
                "millrace-" + connection.connectionId() + "-browser", null);
        open.add(consumer);
        try {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = new HashMap<>(consumer.endOffsets(partitions));
            return new Browse(consumer, ends);
        } catch (RuntimeException e) {
            release(consumer);
            throw JmsExceptions.fromClient("browse " + topic, e);
        }
    }

    private void release(KafkaConsumer<byte[], byte[]> consumer) {
        if (open.remove(consumer)) {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    @Override
    public void close() throws JMSException {
        if (closed) {
            return;
        }
        closed = true;
        for (KafkaConsumer<byte[], byte[]> c : open) {
            release(c);
        }
        session.removeBrowser(this);
    }

    /** One pass over the queue, up to the ends seen at its start. */
    private final class Browse implements Enumeration<Message> {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private final Map<TopicPartition, Long> ends;
        private final Deque<MillraceMessage> ready = new ArrayDeque<>();

        Browse(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> ends) {
            this.consumer = consumer;
            this.ends = ends;
        }

        @Override
        public boolean hasMoreElements() {
            long deadline = System.nanoTime() + Duration.ofMillis(session.connection().settings().requestTimeoutMs())
                    .toNanos();
            while (ready.isEmpty() && !closed && !ends.isEmpty() && System.nanoTime() < deadline) {
                fill();
            }
            if (ready.isEmpty()) {
                release(consumer);
            }
            return !ready.isEmpty();
        }

        private void fill() {
            ends.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
            if (ends.isEmpty()) {
                return;
            }
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                Long end = ends.get(tp);
                if (end == null || r.offset() >= end) {
                    continue;
                }
                try {
                    MillraceMessage m = RecordMessageMapper.toMessage(JmsRecord.of(r), (MillraceDestination) queue,
                            1);
                    if (m.getJMSExpiration() == 0 || m.getJMSExpiration() > System.currentTimeMillis()) {
                        ready.add(m);
                    }
                } catch (JMSException e) {
                    // a malformed record is not browsable; consumers get the error
                }
            }
        }

        @Override
        public Message nextElement() {
            if (!hasMoreElements()) {
                throw new NoSuchElementException("no more messages on " + queue);
            }
            return ready.poll();
        }
    }
}
