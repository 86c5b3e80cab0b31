package dev.millrace.jms;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.millrace.jms.message.MillraceMessage;
import dev.millrace.jms.message.RecordMessageMapper;
import dev.millrace.jms.wire.BrokerExtensions;
import dev.millrace.jms.wire.Delivery;
import dev.millrace.jms.wire.DestinationSetup;
import dev.millrace.jms.wire.DurableSubscriptions;
import dev.millrace.jms.wire.Fetcher;
import dev.millrace.jms.wire.ShareFetcher;
import dev.millrace.jms.wire.SharedSubscriptions;
import dev.millrace.jms.wire.TopicFetcher;
import dev.millrace.protocol.selector.MemberSelector;
import dev.millrace.protocol.selector.Selector;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageListener;
import jakarta.jms.Queue;
import jakarta.jms.QueueReceiver;
import jakarta.jms.Topic;
import jakarta.jms.TopicSubscriber;

/**
 * Receives from one destination: a queue through its share group ({@link ShareFetcher}, group
 * {@code millrace.queue.<queue>}), a topic from the log end ({@link TopicFetcher} without group), or a durable
 * subscription ({@link TopicFetcher} with group {@code millrace.sub.<clientId>.<subscription>}), or a shared
 * subscription ({@link ShareFetcher} on the topic, see {@link SharedSubscriptions}). At most {@code prefetch} records
 * are fetched ahead. A selector is evaluated by the broker for queues and shared subscriptions, by the
 * {@link TopicFetcher} for the other topic subscribers.
 *
 * <p>Before the first consumer of a destination in a connection, the destination's redelivery and expiry policy is
 * written to the broker ({@link DestinationSetup}). Expired messages are never delivered: they are moved to the
 * destination's expiry queue when it has one, else dropped (acknowledged either way). A message whose
 * JMSDeliveryTime is still ahead of this client's clock is held back until then ({@link DeliveryTimeGate}). A
 * listener runs on its session's delivery thread; receive runs on the caller's. Receive and listener are exclusive,
 * as the specification says.
 */
public class MillraceMessageConsumer implements MessageConsumer, QueueReceiver, TopicSubscriber {

    final AtomicBoolean dispatchScheduled = new AtomicBoolean();
    private final MillraceSession session;
    private final MillraceDestination destination;
    private final String subscriptionName;
    private final boolean noLocal;
    private final String messageSelector;
    /** The share group of a shared subscription, else null. */
    private final String sharedGroup;
    private final boolean sharedDurable;
    private final Fetcher fetcher;
    private final DeliveryTimeGate gate = new DeliveryTimeGate();
    private final Optional<String> expiryQueue;
    private volatile MessageListener listener;
    private volatile boolean closed;

    private MillraceMessageConsumer(MillraceSession session, MillraceDestination destination, String subscriptionName,
                                    boolean noLocal, Selector selector, String sharedGroup, boolean sharedDurable,
                                    Fetcher fetcher, Optional<String> expiryQueue) {
        this.session = session;
        this.expiryQueue = expiryQueue;
        this.destination = destination;
        this.subscriptionName = subscriptionName;
        this.noLocal = noLocal;
        this.messageSelector = selector == null ? null : selector.text();
        this.sharedGroup = sharedGroup;
        this.sharedDurable = sharedDurable;
        this.fetcher = fetcher;
    }

    private static final java.util.concurrent.atomic.AtomicLong SHARE_CONSUMERS =
            new java.util.concurrent.atomic.AtomicLong();

    /**
     * A client id of its own for each share consumer: the broker finds the member holding a transaction's records
     * by it (TxnShareAcknowledge).
     */
    private static String shareClientId(MillraceConnection connection) {
        return "millrace-" + connection.connectionId() + "-s" + SHARE_CONSUMERS.incrementAndGet();
    }

    /** The share group through which queue {@code queue} is consumed (and browsed). */
    static String queueGroup(String queue) {
        return "millrace.queue." + queue;
    }

    /**
     * A queue consumer, a topic subscriber or an unshared durable subscriber ({@code subscriptionName} set).
     *
     * @param selector compiled, or null for none: a queue's goes to the broker in the member's rack id, a topic's is
     *                 applied by the {@link TopicFetcher}
     */
    static MillraceMessageConsumer create(MillraceSession session, MillraceDestination destination,
                                          String subscriptionName, boolean noLocal, Selector selector)
            throws JMSException {
        MillraceConnection connection = session.connection();
        ConnectionSettings settings = connection.settings();
        String name = destination.getName();
        Optional<String> expiryQueue = Optional.empty();
        String shareGroup = queueGroup(name);
        String selectorText = selector == null ? null : selector.text();
        boolean queue = destination instanceof Queue;
        if (!connection.isOwnTemporary(name)) {
            expiryQueue = connection.destinationSetup().prepareOrCreate(name, queue ? shareGroup : null, queue);
        }
        if (queue && connection.isOwnTemporary(name)) {
            connection.queueGroups().configure(shareGroup); // others got it from the destination setup above
        }
        String clientId = "millrace-" + connection.connectionId();
        Fetcher fetcher;
        if (queue) {
            // a client id of its own: the broker's transactional acknowledgements name the member by it
            fetcher = new ShareFetcher(settings, shareClientId(connection), name, shareGroup,
                    MemberSelector.encode(selectorText));
        } else if (subscriptionName == null) {
            fetcher = new TopicFetcher(settings, clientId, name, null,
                    noLocal ? connection.connectionIdBytes() : null, selector, null);
        } else {
            String group = session.durableGroup(subscriptionName);
            String metadata = DurableSubscriptions.metadata(noLocal, selectorText);
            DurableSubscriptions.replaceIfChanged(connection.admin(), settings, group, name, metadata);
            fetcher = new TopicFetcher(settings, clientId, name, group,
                    noLocal ? connection.connectionIdBytes() : null, selector, metadata);
        }
        return started(new MillraceMessageConsumer(session, destination, subscriptionName, noLocal, selector, null,
                false, fetcher, expiryQueue));
    }

    /** A consumer on shared subscription {@code name} of {@code topic} ({@link SharedSubscriptions}). */
    static MillraceMessageConsumer createShared(MillraceSession session, MillraceDestination topic, String name,
                                                boolean durable, Selector selector) throws JMSException {
        MillraceConnection connection = session.connection();
        String topicName = topic.getName();
        Optional<String> expiryQueue = Optional.empty();
        if (!connection.isOwnTemporary(topicName)) {
            connection.destinations().ensure(topicName);
            expiryQueue = connection.destinationSetup().prepare(topicName, null);
        }
        String group = SharedSubscriptions.group(durable, connection.getClientID(), name);
        String selectorText = selector == null ? null : selector.text();
        SharedSubscriptions shared = connection.sharedSubscriptions();
        shared.prepare(group, topicName, selectorText);
        shared.opened(group, topicName, selectorText);
        Fetcher fetcher;
        String shareClientId = shareClientId(connection);
        try {
            fetcher = new ShareFetcher(connection.settings(), shareClientId, topicName,
                    group, MemberSelector.encodeSubscription(selectorText));
        } catch (JMSException | RuntimeException e) {
            shared.closed(group, durable);
            throw e;
        }
        shared.awaitMember(group, shareClientId); // other connections see this consumer from now on
        return started(new MillraceMessageConsumer(session, topic, null, false, selector, group, durable, fetcher,
                expiryQueue));
    }

    private static MillraceMessageConsumer started(MillraceMessageConsumer consumer) {
        consumer.fetcher.onArrival(() -> consumer.session.scheduleDispatch(consumer));
        return consumer;
    }

    String destinationName() {
        return destination.getName();
    }

    String subscriptionName() {
        return subscriptionName;
    }

    String sharedGroup() {
        return sharedGroup;
    }

    boolean isClosed() {
        return closed;
    }

    /** Whether a message is ready for the listener: buffered and not held back until its JMSDeliveryTime. */
    boolean hasBuffered() {
        return fetcher.hasBuffered() && !gate.holding(System.currentTimeMillis());
    }

    MessageListener getListenerQuietly() {
        return listener;
    }

    private void checkClosed() throws IllegalStateException {
        if (closed) {
            throw new IllegalStateException("the consumer is closed");
        }
        session.checkClosed();
    }

    @Override
    public String getMessageSelector() throws JMSException {
        checkClosed();
        return messageSelector;
    }

    @Override
    public MessageListener getMessageListener() throws JMSException {
        checkClosed();
        return listener;
    }

    @Override
    public void setMessageListener(MessageListener listener) throws JMSException {
        checkClosed();
        this.listener = listener;
        if (fetcher instanceof ShareFetcher share) {
            share.setListening(listener != null);
        }
        session.scheduleDispatch(this);
    }

    @Override
    public Queue getQueue() throws JMSException {
        checkClosed();
        return (Queue) destination;
    }

    @Override
    public Topic getTopic() throws JMSException {
        checkClosed();
        return (Topic) destination;
    }

    @Override
    public boolean getNoLocal() throws JMSException {
        checkClosed();
        return noLocal;
    }

    @Override
    public Message receive() throws JMSException {
        return receive(0, false, m -> m);
    }

    @Override
    public Message receive(long timeout) throws JMSException {
        return receive(timeout, false, m -> m);
    }

    @Override
    public Message receiveNoWait() throws JMSException {
        return receive(0, true, m -> m);
    }

    /** What a receive makes of the message before it counts as delivered. */
    @FunctionalInterface
    interface Receipt<R> {
        /** @throws jakarta.jms.MessageFormatException to refuse the message (see the caller's rules) */
        R accept(MillraceMessage message) throws JMSException;
    }

    /**
     * {@code receive(timeout)} (0 = no limit) or, with {@code noWait}, {@code receiveNoWait()}, returning what
     * {@code receipt} makes of the message (JMSConsumer.receiveBody). When {@code receipt} throws a
     * MessageFormatException, in AUTO_ACKNOWLEDGE and DUPS_OK_ACKNOWLEDGE the message goes back to the front of the
     * buffer unacknowledged, not counted as a redelivery (the next receive gets it again); in CLIENT_ACKNOWLEDGE and
     * transacted sessions it counts as delivered (JMSConsumer.receiveBody javadoc).
     */
    <R> R receive(long timeout, boolean noWait, Receipt<R> receipt) throws JMSException {
        if (noWait) {
            return receiveWithin(0, true, receipt);
        }
        return receiveWithin(timeout == 0 ? -1 : Math.max(timeout, 1), false, receipt);
    }

    /** @param timeoutMs negative for no limit; {@code noWait} returns at once if nothing is ready */
    private <R> R receiveWithin(long timeoutMs, boolean noWait, Receipt<R> receipt) throws JMSException {
        checkClosed();
        if (listener != null) {
            throw new IllegalStateException("receive is not allowed while a MessageListener is set");
        }
        long deadline = timeoutMs < 0 ? Long.MAX_VALUE : System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        MillraceConnection connection = session.connection();
        try {
            while (!closed) {
                if (!connection.isStarted()) {
                    if (noWait || !connection.awaitStarted(deadline)) {
                        return null;
                    }
                    continue;
                }
                long leftMs = deadline == Long.MAX_VALUE ? -1
                        : TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (!noWait && leftMs == 0) {
                    return null;
                }
                Delivery d = fetcher.take(noWait ? 0 : Math.min(leftMs < 0 ? 200 : leftMs, 200));
                if (d == null) {
                    checkFetcher();
                    if (noWait || (deadline != Long.MAX_VALUE && System.nanoTime() >= deadline)) {
                        return null;
                    }
                    continue;
                }
                if (!connection.isStarted() || closed) {
                    fetcher.putBack(List.of(d));
                    continue;
                }
                long notDueMs = DeliveryTimeGate.notDueMs(d, System.currentTimeMillis());
                if (notDueMs > 0) {
                    fetcher.putBack(List.of(d));
                    if (noWait) {
                        return null;
                    }
                    long left = deadline == Long.MAX_VALUE ? notDueMs
                            : TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                    DeliveryTimeGate.pause(Math.min(notDueMs, left));
                    continue;
                }
                MillraceMessage m = toMessage(d);
                if (m == null) {
                    continue;
                }
                R received;
                try {
                    received = receipt.accept(m);
                } catch (jakarta.jms.MessageFormatException e) {
                    if (session.acknowledgesOnDelivery()) {
                        fetcher.putBack(List.of(d));
                    } else {
                        session.afterDelivery(this, d);
                    }
                    throw e;
                }
                session.afterDelivery(this, d);
                return received;
            }
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new JMSException("interrupted in receive");
        }
    }

    private void checkFetcher() throws JMSException {
        Throwable failure = fetcher.failure();
        if (failure != null) {
            throw JmsExceptions.fromClient("receive from " + destination, failure);
        }
    }

    /**
     * The message for {@code d}, or null when it has expired: then it was moved to the expiry queue, if any, and
     * acknowledged. When the move fails, a queue message is released (it comes back, and a lasting failure ends in
     * the dead-letter queue) and a topic message is dropped, the failure going to the ExceptionListener.
     */
    private MillraceMessage toMessage(Delivery d) throws JMSException {
        MillraceMessage m = RecordMessageMapper.toMessage(d.jmsRecord(), destination, d.deliveryCount());
        long expiration = m.getJMSExpiration();
        long now = System.currentTimeMillis();
        if (expiration != 0 && expiration <= now) {
            if (expiryQueue.isPresent()) {
                try {
                    session.connection().moveToExpiryQueue(d, expiryQueue.get(), now);
                } catch (JMSException e) {
                    if (destination instanceof Queue) {
                        redeliver(List.of(d));
                        return null;
                    }
                    connectionFailure(e);
                }
            }
            acknowledge(List.of(d), false);
            return null;
        }
        session.prepare(m);
        return m;
    }

    /** Delivers one buffered message to the listener, on the session's delivery thread. */
    void deliverToListener() {
        MessageListener l = listener;
        if (l == null) {
            return;
        }
        Delivery d;
        try {
            d = fetcher.take(0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (d == null) {
            return;
        }
        long now = System.currentTimeMillis();
        long notDueMs = DeliveryTimeGate.notDueMs(d, now);
        if (notDueMs > 0) {
            fetcher.putBack(List.of(d));
            gate.hold(now + notDueMs);
            session.connection().schedule(() -> session.scheduleDispatch(this), notDueMs);
            return;
        }
        try {
            MillraceMessage m = toMessage(d);
            if (m == null) {
                return;
            }
            int mode = session.getAcknowledgeMode();
            // CLIENT_ACKNOWLEDGE and transacted: the message belongs to the session before onMessage, so that
            // message.acknowledge() or Session.commit() called in it covers this message too; a listener that throws
            // leaves it there, for the next acknowledge, commit or rollback
            boolean clientAcknowledge = mode == jakarta.jms.Session.CLIENT_ACKNOWLEDGE
                    || mode == jakarta.jms.Session.SESSION_TRANSACTED;
            if (clientAcknowledge) {
                session.afterDelivery(this, d);
            }
            boolean threw = false;
            try {
                l.onMessage(m);
            } catch (RuntimeException e) {
                threw = true;
            }
            boolean recovered = session.takeRecoverInListener();
            if (!clientAcknowledge && (threw || recovered)) {
                // AUTO and DUPS_OK: a listener that throws, or calls Session.recover, gets the message again at once
                redeliver(List.of(d));
                return;
            }
            if (!closed && !clientAcknowledge) {
                session.afterDelivery(this, d);
            }
        } catch (JMSException e) {
            connectionFailure(e);
        }
    }

    private void connectionFailure(JMSException e) {
        try {
            jakarta.jms.ExceptionListener l = session.connection().getExceptionListener();
            if (l != null) {
                l.onException(e);
            }
        } catch (JMSException ignored) {
            // the connection is closed
        }
    }

    void acknowledge(List<Delivery> deliveries, boolean sync) throws JMSException {
        if (fetcher instanceof ShareFetcher share) {
            share.acknowledge(deliveries, sync);
        } else {
            ((TopicFetcher) fetcher).acknowledge(deliveries, sync);
        }
    }

    /**
     * The acknowledgement of AUTO_ACKNOWLEDGE ({@code sendNow}) and DUPS_OK_ACKNOWLEDGE. Queues: without waiting
     * for the broker, the acceptance sent at once ({@code sendNow}) or with the next fetch. Topics (durable
     * subscriptions): a synchronous offset commit ({@code sendNow}) or an asynchronous one.
     */
    void acknowledgeLater(List<Delivery> deliveries, boolean sendNow) throws JMSException {
        if (fetcher instanceof ShareFetcher share) {
            share.acknowledgeLater(deliveries, sendNow);
        } else {
            ((TopicFetcher) fetcher).acknowledge(deliveries, sendNow);
        }
    }

    /**
     * The commit of a transaction that wrote to the broker: a queue consumer's acceptances join the transaction
     * (true); a topic consumer's are left to the caller, to acknowledge once the transaction committed (false).
     */
    boolean acceptInTransaction(BrokerExtensions extensions, String transactionalId, List<Delivery> deliveries)
            throws JMSException {
        if (fetcher instanceof ShareFetcher share) {
            share.acceptInTransaction(extensions, transactionalId, deliveries);
            return true;
        }
        return false;
    }

    /**
     * For a durable subscription's deliveries in a transaction: the group and the offsets the transaction commits
     * (sendOffsetsToTransaction); null for queues, shared subscriptions and non-durable subscribers.
     */
    java.util.Map.Entry<String, java.util.Map<org.apache.kafka.common.TopicPartition,
            org.apache.kafka.clients.consumer.OffsetAndMetadata>> transactionOffsets(List<Delivery> deliveries) {
        if (fetcher instanceof TopicFetcher topic && topic.groupId() != null) {
            return java.util.Map.entry(topic.groupId(), topic.offsetsAfter(deliveries));
        }
        return null;
    }

    /** Whether this consumer reads a queue (a share group), whose acceptances can join a broker transaction. */
    boolean isQueueConsumer() {
        return fetcher instanceof ShareFetcher;
    }

    /** A transaction committed the offsets of {@link #transactionOffsets}: bookkeeping only. */
    void committedInTransaction(List<Delivery> deliveries) throws JMSException {
        if (fetcher instanceof TopicFetcher topic) {
            topic.committedInTransaction(deliveries);
        }
    }

    /** Delivers {@code deliveries} again: queues release them to the share group, topics rewind. */
    void redeliver(List<Delivery> deliveries) throws JMSException {
        if (closed) {
            return;
        }
        if (fetcher instanceof ShareFetcher share) {
            share.release(deliveries);
        } else {
            ((TopicFetcher) fetcher).rewind(deliveries);
        }
    }

    /**
     * Closes the consumer, waiting for its listener in progress unless called from it; a receive in progress
     * returns null. Unacknowledged queue messages are released.
     */
    @Override
    public void close() throws JMSException {
        if (closed) {
            return;
        }
        session.withDeliveryLock(this::closeForSession);
        session.removeConsumer(this);
    }

    void closeForSession() {
        boolean wasClosed = closed;
        closed = true;
        listener = null;
        fetcher.close();
        if (!wasClosed && sharedGroup != null) {
            session.connection().sharedSubscriptions().closed(sharedGroup, sharedDurable);
        }
    }

    @Override
    public String toString() {
        return "MillraceMessageConsumer[" + destination + (subscriptionName == null ? "" : ", " + subscriptionName)
                + "]";
    }
}
