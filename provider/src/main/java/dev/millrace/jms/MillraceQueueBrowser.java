package dev.millrace.jms;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Enumeration;
import java.util.List;
import java.util.NoSuchElementException;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Utils;

import dev.millrace.jms.message.MillraceMessage;
import dev.millrace.jms.message.RecordMessageMapper;
import dev.millrace.jms.wire.BrokerExtensions;
import dev.millrace.protocol.ext.ShareBrowse;
import dev.millrace.protocol.jms.JmsRecord;
import dev.millrace.protocol.selector.RecordSelectorContext;
import dev.millrace.protocol.selector.Selector;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSException;
import jakarta.jms.JMSRuntimeException;
import jakarta.jms.Message;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;

/**
 * Browses a queue without acquiring anything, through the broker's ShareBrowse extension: each enumeration walks
 * every partition of the queue from its share group's start offset up to the end the partition had when the walk
 * reached it, and shows the records the share group has not settled: never delivered, waiting for redelivery, or
 * delivered to a consumer that has not acknowledged them yet. Accepted, rejected and dead-lettered messages are
 * not shown, nor are expired ones or those of open or aborted transactions (for a read_committed queue group).
 * Partitions are walked one after the other, so messages of one partition keep their order. A message selector is
 * applied here, to what the broker returns (a browser acquires nothing, so nothing is taken from other consumers).
 *
 * <p>Messages are read-only, with {@code JMSXDeliveryCount} 1 (the browser does not deliver them). A message that
 * cannot be decoded is skipped (consumers report it). The enumeration is not a frozen snapshot (JMS 3.1 allows
 * that): a message acknowledged while the walk is underway may still be shown.
 *
 * <p>Used by one thread at a time; {@link #close} may come from another.
 */
public class MillraceQueueBrowser implements QueueBrowser {

    private final MillraceSession session;
    private final Queue queue;
    /** Compiled message selector, or null: applied here, to what the broker returns (browsing acquires nothing). */
    private final Selector selector;
    private volatile boolean closed;

    MillraceQueueBrowser(MillraceSession session, Queue queue, Selector selector) {
        this.session = session;
        this.queue = queue;
        this.selector = selector;
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
        return selector == null ? null : selector.text();
    }

    @Override
    public Enumeration<Message> getEnumeration() throws JMSException {
        checkClosed();
        BrokerExtensions browsing = session.connection().extensions();
        String topic = queue.getQueueName();
        session.connection().queueGroups().configure(MillraceMessageConsumer.queueGroup(topic));
        return new Walk(browsing, topic, browsing.leaders(topic));
    }

    @Override
    public void close() throws JMSException {
        if (closed) {
            return;
        }
        closed = true;
        session.removeBrowser(this);
    }

    /** One pass over the queue's partitions. */
    private final class Walk implements Enumeration<Message> {
        private final BrokerExtensions browsing;
        private final String topic;
        private final List<Node> leaders;
        private final Deque<MillraceMessage> ready = new ArrayDeque<>();
        private final RecordSelectorContext selectorContext = new RecordSelectorContext();
        private int partition;
        /** Next offset to read in {@link #partition}; -1 = the share group's start offset. */
        private long offset = -1;
        /** End of {@link #partition} fixed at its first read; -1 = not read yet. */
        private long end = -1;

        Walk(BrokerExtensions browsing, String topic, List<Node> leaders) {
            this.browsing = browsing;
            this.topic = topic;
            this.leaders = new ArrayList<>(leaders);
        }

        @Override
        public boolean hasMoreElements() {
            try {
                while (ready.isEmpty() && !closed && partition < leaders.size()) {
                    fill();
                }
            } catch (JMSException e) {
                throw new JMSRuntimeException(e.getMessage(), e.getErrorCode(), e);
            }
            return !ready.isEmpty();
        }

        private void fill() throws JMSException {
            ShareBrowse.Response r = browsing.browse(leaders.get(partition), MillraceMessageConsumer.queueGroup(topic), topic,
                    partition, offset);
            if (end < 0) {
                end = r.endOffset();
            }
            long from = Math.max(offset, r.startOffset());
            long limit = Math.min(end, r.endOffset());
            if (r.records() != null) {
                long now = System.currentTimeMillis();
                for (RecordBatch batch : MemoryRecords.readableRecords(r.records()).batches()) {
                    for (Record record : batch) {
                        long o = record.offset();
                        if (o >= from && o < limit && !r.isHidden(o)) {
                            add(record, now);
                        }
                    }
                }
            }
            boolean stuck = r.nextOffset() <= from && r.records() == null;
            offset = r.nextOffset();
            if (stuck || offset >= end || r.nextOffset() >= r.endOffset()) {
                partition++;
                offset = -1;
                end = -1;
            }
        }

        private void add(Record record, long now) {
            byte[] key = record.hasKey() ? Utils.toArray(record.key()) : null;
            byte[] value = record.hasValue() ? Utils.toArray(record.value()) : null;
            JmsRecord jms = new JmsRecord(key, value, record.timestamp(), List.of(record.headers()));
            try {
                if (selector != null && !selector.matches(selectorContext.reset(jms, 1))) {
                    return;
                }
                MillraceMessage m = RecordMessageMapper.toMessage(jms, (MillraceDestination) queue, 1);
                if (m.getJMSExpiration() == 0 || m.getJMSExpiration() > now) {
                    ready.add(m);
                }
            } catch (JMSException | RuntimeException e) {
                // not decodable as a JMS message: skipped here, consumers report it
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
