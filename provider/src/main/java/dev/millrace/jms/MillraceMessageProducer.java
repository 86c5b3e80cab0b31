package dev.millrace.jms;

import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

import dev.millrace.jms.message.RecordMessageMapper;
import dev.millrace.jms.wire.DelayedRecords;
import dev.millrace.protocol.jms.JmsHeaders;
import jakarta.jms.CompletionListener;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Destination;
import jakarta.jms.IllegalStateException;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.QueueSender;
import jakarta.jms.Topic;
import jakarta.jms.TopicPublisher;

/**
 * Sends messages through the connection's Kafka producer for the message's delivery mode, to the partition its
 * session keeps for the destination. A synchronous send returns after the broker's acknowledgement ({@code acks=all}
 * for PERSISTENT by default); an asynchronous one calls its CompletionListener on the session's delivery thread, in
 * send order. Messages to topics carry the connection id header for noLocal subscribers.
 *
 * <p>Delivery delay (JMS 3.1 7.9): every send sets JMSDeliveryTime to the send time plus the delay (so, with no
 * delay, to JMSTimestamp). A message with a delay goes to the broker's delay topic ({@link DelayedRecords}) and
 * reaches its destination, at the partition the session keeps for it, once JMSDeliveryTime has come. Used by one
 * thread at a time, as the session is.
 */
public class MillraceMessageProducer implements MessageProducer, QueueSender, TopicPublisher {

    private final MillraceSession session;
    private final MillraceDestination destination;
    private volatile boolean closed;
    private boolean disableMessageId;
    private boolean disableTimestamp;
    private int deliveryMode = DeliveryMode.PERSISTENT;
    private int priority = Message.DEFAULT_PRIORITY;
    private long timeToLive = Message.DEFAULT_TIME_TO_LIVE;
    private long deliveryDelay = Message.DEFAULT_DELIVERY_DELAY;

    MillraceMessageProducer(MillraceSession session, MillraceDestination destination) {
        this.session = session;
        this.destination = destination;
    }

    private void checkClosed() throws IllegalStateException {
        if (closed) {
            throw new IllegalStateException("the producer is closed");
        }
        session.checkClosed();
    }

    @Override
    public void setDisableMessageID(boolean value) throws JMSException {
        checkClosed();
        disableMessageId = value;
    }

    @Override
    public boolean getDisableMessageID() throws JMSException {
        checkClosed();
        return disableMessageId;
    }

    @Override
    public void setDisableMessageTimestamp(boolean value) throws JMSException {
        checkClosed();
        disableTimestamp = value;
    }

    @Override
    public boolean getDisableMessageTimestamp() throws JMSException {
        checkClosed();
        return disableTimestamp;
    }

    @Override
    public void setDeliveryMode(int deliveryMode) throws JMSException {
        checkClosed();
        checkDeliveryMode(deliveryMode);
        this.deliveryMode = deliveryMode;
    }

    private static void checkDeliveryMode(int deliveryMode) throws JMSException {
        if (deliveryMode != DeliveryMode.PERSISTENT && deliveryMode != DeliveryMode.NON_PERSISTENT) {
            throw new JMSException("delivery mode must be PERSISTENT or NON_PERSISTENT, not " + deliveryMode);
        }
    }

    private static void checkPriority(int priority) throws JMSException {
        if (priority < 0 || priority > 9) {
            throw new JMSException("priority must be 0..9, not " + priority);
        }
    }

    @Override
    public int getDeliveryMode() throws JMSException {
        checkClosed();
        return deliveryMode;
    }

    @Override
    public void setPriority(int defaultPriority) throws JMSException {
        checkClosed();
        checkPriority(defaultPriority);
        this.priority = defaultPriority;
    }

    @Override
    public int getPriority() throws JMSException {
        checkClosed();
        return priority;
    }

    @Override
    public void setTimeToLive(long timeToLive) throws JMSException {
        checkClosed();
        this.timeToLive = timeToLive;
    }

    @Override
    public long getTimeToLive() throws JMSException {
        checkClosed();
        return timeToLive;
    }

    @Override
    public void setDeliveryDelay(long deliveryDelay) throws JMSException {
        checkClosed();
        if (deliveryDelay < 0) {
            throw new JMSException("delivery delay must not be negative, not " + deliveryDelay);
        }
        this.deliveryDelay = deliveryDelay;
    }

    @Override
    public long getDeliveryDelay() throws JMSException {
        checkClosed();
        return deliveryDelay;
    }

    @Override
    public Destination getDestination() throws JMSException {
        checkClosed();
        return destination;
    }

    @Override
    public Queue getQueue() throws JMSException {
        return (Queue) getDestination();
    }

    @Override
    public Topic getTopic() throws JMSException {
        return (Topic) getDestination();
    }

    /** Waits for this producer's async sends, then closes it. Not allowed from its own CompletionListener. */
    @Override
    public void close() throws JMSException {
        if (closed) {
            return;
        }
        if (session.isInCompletionListener()) {
            throw new IllegalStateException("close() from a CompletionListener of its own session");
        }
        session.awaitAsyncSends(this);
        closed = true;
        session.removeProducer(this);
    }

    void closeForSession() {
        closed = true;
    }

    // ---- send

    @Override
    public void send(Message message) throws JMSException {
        send(null, message, deliveryMode, priority, timeToLive, null, false);
    }

    @Override
    public void send(Message message, int deliveryMode, int priority, long timeToLive) throws JMSException {
        send(null, message, deliveryMode, priority, timeToLive, null, false);
    }

    @Override
    public void send(Destination destination, Message message) throws JMSException {
        send(destination, message, deliveryMode, priority, timeToLive, null, true);
    }

    @Override
    public void send(Destination destination, Message message, int deliveryMode, int priority, long timeToLive)
            throws JMSException {
        send(destination, message, deliveryMode, priority, timeToLive, null, true);
    }

    @Override
    public void send(Message message, CompletionListener completionListener) throws JMSException {
        send(null, message, deliveryMode, priority, timeToLive, checkListener(completionListener), false);
    }

    @Override
    public void send(Message message, int deliveryMode, int priority, long timeToLive,
                     CompletionListener completionListener) throws JMSException {
        send(null, message, deliveryMode, priority, timeToLive, checkListener(completionListener), false);
    }

    @Override
    public void send(Destination destination, Message message, CompletionListener completionListener)
            throws JMSException {
        send(destination, message, deliveryMode, priority, timeToLive, checkListener(completionListener), true);
    }

    @Override
    public void send(Destination destination, Message message, int deliveryMode, int priority, long timeToLive,
                     CompletionListener completionListener) throws JMSException {
        send(destination, message, deliveryMode, priority, timeToLive, checkListener(completionListener), true);
    }

    @Override
    public void send(Queue queue, Message message) throws JMSException {
        send((Destination) queue, message);
    }

    @Override
    public void send(Queue queue, Message message, int deliveryMode, int priority, long timeToLive)
            throws JMSException {
        send((Destination) queue, message, deliveryMode, priority, timeToLive);
    }

    @Override
    public void publish(Message message) throws JMSException {
        send(message);
    }

    @Override
    public void publish(Message message, int deliveryMode, int priority, long timeToLive) throws JMSException {
        send(message, deliveryMode, priority, timeToLive);
    }

    @Override
    public void publish(Topic topic, Message message) throws JMSException {
        send(topic, message);
    }

    @Override
    public void publish(Topic topic, Message message, int deliveryMode, int priority, long timeToLive)
            throws JMSException {
        send(topic, message, deliveryMode, priority, timeToLive);
    }

    private static CompletionListener checkListener(CompletionListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("completionListener must not be null");
        }
        return listener;
    }

    private void send(Destination explicit, Message message, int mode, int prio, long ttl,
                      CompletionListener listener, boolean destinationGiven) throws JMSException {
        checkClosed();
        MillraceDestination target;
        if (destinationGiven) {
            if (destination != null) {
                throw new UnsupportedOperationException("this producer has a destination (" + destination
                        + "); send without one");
            }
            if (explicit == null) {
                throw new InvalidDestinationException("destination must not be null");
            }
            target = MillraceDestination.from(explicit);
        } else {
            if (destination == null) {
                throw new UnsupportedOperationException("this producer has no destination; name one in send");
            }
            target = destination;
        }
        if (message == null) {
            throw new MessageFormatException("message must not be null");
        }
        checkDeliveryMode(mode);
        checkPriority(prio);
        MillraceConnection connection = session.connection();
        if (!(target instanceof MillraceTemporaryQueue || target instanceof MillraceTemporaryTopic)) {
            connection.destinations().ensure(target.getName(), target instanceof Queue);
        }
        long now = System.currentTimeMillis();
        message.setJMSDestination(target);
        message.setJMSDeliveryMode(mode);
        message.setJMSPriority(prio);
        message.setJMSTimestamp(disableTimestamp ? 0 : now);
        message.setJMSExpiration(ttl > 0 ? now + ttl : 0);
        long delay = deliveryDelay;
        message.setJMSDeliveryTime(delay > 0 ? now + delay : disableTimestamp ? 0 : now);
        message.setJMSMessageID(disableMessageId ? null : connection.nextMessageId());
        KafkaProducer<byte[], byte[]> producer = session.producerFor(mode);
        ProducerRecord<byte[], byte[]> record = RecordMessageMapper.toRecord(message)
                .toProducerRecord(target.getName(), session.partitionFor(producer, target.getName()));
        if (target instanceof Topic) {
            record.headers().add(JmsHeaders.CONNECTION_ID, connection.connectionIdBytes());
        }
        if (delay > 0) {
            record = DelayedRecords.schedule(record, now + delay, producer);
        }
        if (listener == null && session.sendsInTransaction()) {
            // in a transaction the outcome counts at commit: a failed send fails the commit
            try {
                session.sentInTransaction(producer.send(record));
            } catch (RuntimeException e) {
                throw JmsExceptions.fromClient("send to " + target, e);
            }
            return;
        }
        if (listener == null) {
            Future<RecordMetadata> result;
            try {
                result = producer.send(record);
                // kafka-clients retries through a failover and ends the future by itself after delivery.timeout.ms
                // (requestTimeoutMs + failoverTimeoutMs); the longer wait here is only a safety net
                result.get(connection.settings().blockingTimeoutMs() + connection.settings().requestTimeoutMs(),
                        TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw JmsExceptions.fromClient("send to " + target, e);
            } catch (Exception e) {
                throw JmsExceptions.fromClient("send to " + target, e);
            }
            return;
        }
        AsyncSends.Pending pending = new AsyncSends.Pending(this, message, listener);
        session.addAsyncSend(pending);
        try {
            producer.send(record, (metadata, failure) -> {
                pending.complete(failure == null ? null : JmsExceptions.fromClient("send to " + target, failure));
                session.onAsyncSendDone();
            });
        } catch (RuntimeException e) {
            pending.complete(JmsExceptions.fromClient("send to " + target, e));
            session.onAsyncSendDone();
        }
    }

    @Override
    public String toString() {
        return "MillraceMessageProducer[" + destination + "]";
    }
}
