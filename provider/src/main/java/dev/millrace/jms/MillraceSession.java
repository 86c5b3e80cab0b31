package dev.millrace.jms;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.kafka.clients.producer.KafkaProducer;

import dev.millrace.jms.message.MillraceBytesMessage;
import dev.millrace.jms.message.MillraceMapMessage;
import dev.millrace.jms.message.MillraceMessage;
import dev.millrace.jms.message.MillraceObjectMessage;
import dev.millrace.jms.message.MillraceStreamMessage;
import dev.millrace.jms.message.MillraceTextMessage;
import dev.millrace.jms.wire.Delivery;
import dev.millrace.jms.wire.SharedSubscriptions;
import dev.millrace.protocol.selector.Selector;
import jakarta.jms.BytesMessage;
import jakarta.jms.Destination;
import jakarta.jms.IllegalStateException;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageListener;
import jakarta.jms.MessageProducer;
import jakarta.jms.ObjectMessage;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;
import jakarta.jms.QueueReceiver;
import jakarta.jms.QueueSender;
import jakarta.jms.QueueSession;
import jakarta.jms.Session;
import jakarta.jms.StreamMessage;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TemporaryTopic;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;
import jakarta.jms.TopicPublisher;
import jakarta.jms.TopicSession;
import jakarta.jms.TopicSubscriber;

/**
 * A session: its producers and consumers, acknowledgement, and the one delivery thread that runs its
 * MessageListeners and CompletionListeners (so they never run concurrently, as the specification's threading rules
 * require).
 *
 * <ul>
 *   <li>AUTO_ACKNOWLEDGE: a message is acknowledged when receive returns it or its listener returns. On a queue the
 *       consumer's fetch thread sends the acceptance at once (with any that came meanwhile) and the application does
 *       not wait for the broker's answer (as Artemis and ActiveMQ clients do by default): a consumer that dies just then may get the message again, flagged JMSRedelivered, which the
 *       specification allows. On a durable subscription the offset commit is awaited. DUPS_OK_ACKNOWLEDGE: queue
 *       acceptances go with the next fetch (after the prefetched batch), topic commits are not awaited.
 *       CLIENT_ACKNOWLEDGE: {@link #acknowledge()} acknowledges every message this session delivered (waiting for
 *       the broker with the factory's {@code blockOnAcknowledge}).
 *   <li>{@link #recover()} delivers the unacknowledged messages again: topics rewind locally (JMSXDeliveryCount
 *       counted by the consumer), queues release them to the share group (counted by the broker).
 *   <li>A producer keeps one partition per destination for the session's life ({@link #partitionFor}), so one
 *       session's messages to a destination are read in the order they were sent.
 *   <li>Async sends: CompletionListeners run on the delivery thread in the order of the sends.
 *   <li>A session made by {@code createQueueSession} or {@code createTopicSession} refuses the other domain's methods
 *       ({@link SessionDomain}); one made by {@code createSession} allows both.
 * </ul>
 *
 * <p>Thread-safe where the specification allows use from several threads (close, the listeners' thread); otherwise
 * used by one thread at a time, as sessions must be.
 */
public class MillraceSession implements Session, QueueSession, TopicSession {

    private final MillraceConnection connection;
    private final int mode;
    /** Which domain's methods this session allows: QueueSession / TopicSession rules (see {@link SessionDomain}). */
    private final SessionDomain domain;
    private final int partitionSalt = ThreadLocalRandom.current().nextInt() & 0x7fffffff;
    private final List<MillraceMessageConsumer> consumers = new CopyOnWriteArrayList<>();
    private final List<MillraceMessageProducer> producers = new CopyOnWriteArrayList<>();
    private final List<MillraceQueueBrowser> browsers = new CopyOnWriteArrayList<>();
    private final List<Unacknowledged> unacknowledged = new ArrayList<>();
    private final Map<String, Integer> partitions = new ConcurrentHashMap<>();
    private final AsyncSends asyncSends;
    private final ReentrantLock deliveryLock = new ReentrantLock();
    private final ExecutorService deliveryExecutor;
    private volatile Thread deliveryThread;
    private volatile boolean closed;
    /** recover() was called in the running MessageListener of an AUTO/DUPS_OK session. Delivery thread only. */
    private boolean recoverInListener;
    /** The broker transaction of a SESSION_TRANSACTED session, else null. */
    private final SessionTransaction transaction;

    MillraceSession(MillraceConnection connection, int mode, SessionDomain domain) {
        this.connection = connection;
        this.mode = mode;
        this.domain = domain;
        this.transaction = mode == SESSION_TRANSACTED ? new SessionTransaction(connection) : null;
        this.deliveryExecutor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "millrace-session-" + connection.connectionId());
            t.setDaemon(true);
            deliveryThread = t;
            return t;
        });
        this.asyncSends = new AsyncSends(deliveryExecutor, deliveryLock,
                connection.settings().blockingTimeoutMs() + connection.settings().requestTimeoutMs());
    }

    private record Unacknowledged(MillraceMessageConsumer consumer, Delivery delivery) {
    }

    // ---- package-private helpers

    MillraceConnection connection() {
        return connection;
    }

    boolean isDeliveryThread() {
        return Thread.currentThread() == deliveryThread;
    }

    void checkClosed() throws IllegalStateException {
        if (closed) {
            throw new IllegalStateException("the session is closed");
        }
        connection.checkClosed();
    }

    /** The partition this session writes {@code topic} to: fixed for the session's life. */
    int partitionFor(KafkaProducer<byte[], byte[]> producer, String topic) {
        return partitions.computeIfAbsent(topic, t -> Math.floorMod(partitionSalt, producer.partitionsFor(t).size()));
    }

    boolean hasConsumerOn(String destination) {
        return consumers.stream().anyMatch(c -> c.destinationName().equals(destination));
    }

    void removeConsumer(MillraceMessageConsumer c) {
        consumers.remove(c);
    }

    void removeProducer(MillraceMessageProducer p) {
        producers.remove(p);
    }

    void removeBrowser(MillraceQueueBrowser b) {
        browsers.remove(b);
    }

    boolean hasActiveDurable(String subscription) {
        return consumers.stream().anyMatch(c -> subscription.equals(c.subscriptionName()));
    }

    /** Whether delivery alone acknowledges (AUTO_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE), not the application. */
    boolean acknowledgesOnDelivery() {
        return mode == AUTO_ACKNOWLEDGE || mode == DUPS_OK_ACKNOWLEDGE;
    }

    /** What happens after a message was handed to the application (receive returned, or onMessage returned). */
    void afterDelivery(MillraceMessageConsumer consumer, Delivery delivery) throws JMSException {
        switch (mode) {
            case AUTO_ACKNOWLEDGE -> consumer.acknowledgeLater(List.of(delivery), true);
            case DUPS_OK_ACKNOWLEDGE -> consumer.acknowledgeLater(List.of(delivery), false);
            default -> {
                synchronized (unacknowledged) {
                    unacknowledged.add(new Unacknowledged(consumer, delivery));
                }
            }
        }
    }

    /** Prepares a received message: in CLIENT_ACKNOWLEDGE, its acknowledge() acknowledges the session. */
    void prepare(MillraceMessage message) {
        if (mode == CLIENT_ACKNOWLEDGE) {
            message.setAcknowledgeCallback(m -> acknowledge());
        }
    }

    void scheduleDispatch(MillraceMessageConsumer consumer) {
        if (closed || !connection.isStarted() || consumer.getListenerQuietly() == null) {
            return;
        }
        if (consumer.dispatchScheduled.compareAndSet(false, true)) {
            try {
                deliveryExecutor.execute(() -> dispatch(consumer));
            } catch (java.util.concurrent.RejectedExecutionException e) {
                consumer.dispatchScheduled.set(false);
            }
        }
    }

    private void dispatch(MillraceMessageConsumer consumer) {
        consumer.dispatchScheduled.set(false);
        deliveryLock.lock();
        try {
            if (closed || !connection.isStarted() || consumer.isClosed()) {
                return;
            }
            consumer.deliverToListener();
        } finally {
            deliveryLock.unlock();
        }
        if (consumer.hasBuffered()) {
            scheduleDispatch(consumer);
        }
    }

    void onStarted() {
        for (MillraceMessageConsumer c : consumers) {
            scheduleDispatch(c);
        }
    }

    /** Runs {@code action} while no listener of this session runs. */
    void withDeliveryLock(Runnable action) {
        deliveryLock.lock();
        try {
            action.run();
        } finally {
            deliveryLock.unlock();
        }
    }

    /** Returns once no listener of this session is running. */
    void awaitDeliveryIdle() {
        if (isDeliveryThread()) {
            return;
        }
        deliveryLock.lock();
        deliveryLock.unlock();
    }

    // ---- async sends (see AsyncSends)

    void addAsyncSend(AsyncSends.Pending send) {
        asyncSends.add(send);
    }

    /** Called by the Kafka producer's I/O thread once a send is complete. */
    void onAsyncSendDone() {
        asyncSends.onDone();
    }

    /** Waits until every async send of this session (of {@code producer}, or all when null) has had its callback. */
    void awaitAsyncSends(MillraceMessageProducer producer) throws JMSException {
        asyncSends.await(producer);
    }

    // ---- messages

    @Override
    public BytesMessage createBytesMessage() throws JMSException {
        checkClosed();
        return new MillraceBytesMessage();
    }

    @Override
    public MapMessage createMapMessage() throws JMSException {
        checkClosed();
        return new MillraceMapMessage();
    }

    @Override
    public Message createMessage() throws JMSException {
        checkClosed();
        return new MillraceMessage();
    }

    @Override
    public ObjectMessage createObjectMessage() throws JMSException {
        checkClosed();
        return new MillraceObjectMessage();
    }

    @Override
    public ObjectMessage createObjectMessage(Serializable object) throws JMSException {
        ObjectMessage m = createObjectMessage();
        m.setObject(object);
        return m;
    }

    @Override
    public StreamMessage createStreamMessage() throws JMSException {
        checkClosed();
        return new MillraceStreamMessage();
    }

    @Override
    public TextMessage createTextMessage() throws JMSException {
        checkClosed();
        return new MillraceTextMessage();
    }

    @Override
    public TextMessage createTextMessage(String text) throws JMSException {
        TextMessage m = createTextMessage();
        m.setText(text);
        return m;
    }

    // ---- transactions and acknowledgement

    @Override
    public boolean getTransacted() throws JMSException {
        checkClosed();
        return transaction != null;
    }

    /** The producer for a send with {@code deliveryMode}: the session's transactional one when transacted. */
    KafkaProducer<byte[], byte[]> producerFor(int deliveryMode) throws JMSException {
        return transaction != null ? transaction.producerForSend() : connection.producer(deliveryMode);
    }

    /** The transaction of a transacted session, else null. */
    SessionTransaction transaction() {
        return transaction;
    }

    /**
     * Whether a send now belongs to a transaction whose commit checks its outcome ({@link #sentInTransaction}),
     * instead of being waited for at once. An XA session answers for its current branch.
     */
    boolean sendsInTransaction() {
        return transaction != null;
    }

    /** A send made in the transaction of {@link #sendsInTransaction}; its outcome is checked at commit. */
    void sentInTransaction(java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata> send) {
        transaction.sent(send);
    }

    /** Takes what this session consumed and has not yet acknowledged, by consumer (for a transaction's commit). */
    Map<MillraceMessageConsumer, List<Delivery>> takeConsumed() {
        return byConsumer(takeUnacknowledged());
    }

    @Override
    public int getAcknowledgeMode() throws JMSException {
        checkClosed();
        return mode;
    }

    /**
     * Commits the session's transaction: its sends become visible and the messages it consumed are acknowledged,
     * together (see {@link SessionTransaction}). Waits for async sends first.
     *
     * @throws jakarta.jms.TransactionRolledBackException when the transaction was rolled back instead
     */
    @Override
    public void commit() throws JMSException {
        checkClosed();
        if (transaction == null) {
            throw new IllegalStateException("commit() on a session that is not transacted");
        }
        if (isInCompletionListener()) {
            throw new IllegalStateException("commit() from a CompletionListener of its own session");
        }
        awaitAsyncSends(null);
        transaction.commit(byConsumer(takeUnacknowledged()));
    }

    /** Rolls the session's transaction back: its sends are discarded and what it consumed is delivered again. */
    @Override
    public void rollback() throws JMSException {
        checkClosed();
        if (transaction == null) {
            throw new IllegalStateException("rollback() on a session that is not transacted");
        }
        if (isInCompletionListener()) {
            throw new IllegalStateException("rollback() from a CompletionListener of its own session");
        }
        awaitAsyncSends(null);
        transaction.rollback();
        redeliverUnacknowledged();
    }

    private List<Unacknowledged> takeUnacknowledged() {
        synchronized (unacknowledged) {
            List<Unacknowledged> pending = new ArrayList<>(unacknowledged);
            unacknowledged.clear();
            return pending;
        }
    }

    /** Acknowledges every message this session has delivered (CLIENT_ACKNOWLEDGE); nothing in the other modes. */
    public void acknowledge() throws JMSException {
        checkClosed();
        List<Unacknowledged> pending;
        synchronized (unacknowledged) {
            pending = new ArrayList<>(unacknowledged);
            unacknowledged.clear();
        }
        boolean block = connection.settings().blockOnAcknowledge();
        for (Map.Entry<MillraceMessageConsumer, List<Delivery>> e : byConsumer(pending).entrySet()) {
            e.getKey().acknowledge(e.getValue(), block);
        }
    }

    /**
     * Delivers the unacknowledged messages again. In AUTO_ACKNOWLEDGE and DUPS_OK_ACKNOWLEDGE the only one is the
     * message a MessageListener of this session is handling: called from that listener, recover makes it come again
     * (JMSRedelivered set) instead of being acknowledged when onMessage returns (JMS 3.1 section 6.2.10, Session.recover
     * javadoc); called elsewhere it has nothing to do.
     */
    @Override
    public void recover() throws JMSException {
        checkClosed();
        if (transaction != null) {
            throw new IllegalStateException("recover() on a transacted session; use rollback()");
        }
        if (acknowledgesOnDelivery() && isInMessageListener()) {
            recoverInListener = true;
        }
        redeliverUnacknowledged();
    }

    /**
     * Whether {@link #recover} was called in the MessageListener that just returned (AUTO_ACKNOWLEDGE,
     * DUPS_OK_ACKNOWLEDGE), clearing it. Delivery thread.
     */
    boolean takeRecoverInListener() {
        boolean requested = recoverInListener;
        recoverInListener = false;
        return requested;
    }

    private void redeliverUnacknowledged() throws JMSException {
        deliveryLock.lock();
        try {
            List<Unacknowledged> pending;
            synchronized (unacknowledged) {
                pending = new ArrayList<>(unacknowledged);
                unacknowledged.clear();
            }
            for (Map.Entry<MillraceMessageConsumer, List<Delivery>> e : byConsumer(pending).entrySet()) {
                e.getKey().redeliver(e.getValue());
            }
        } finally {
            deliveryLock.unlock();
        }
        onStarted();
    }

    private static Map<MillraceMessageConsumer, List<Delivery>> byConsumer(List<Unacknowledged> pending) {
        Map<MillraceMessageConsumer, List<Delivery>> grouped = new LinkedHashMap<>();
        for (Unacknowledged u : pending) {
            grouped.computeIfAbsent(u.consumer(), c -> new ArrayList<>()).add(u.delivery());
        }
        return grouped;
    }

    /**
     * Closes the session: waits for a listener in progress, waits for async sends, closes consumers (a queue's
     * unacknowledged messages are released) and producers. Idempotent. From one of this session's own
     * MessageListeners or CompletionListeners it throws IllegalStateException: the Session.close javadoc forbids it
     * in a CompletionListener and, for a MessageListener, allows failing or succeeding; Millrace fails, like
     * Connection.close and Connection.stop.
     */
    @Override
    public void close() throws JMSException {
        if (closed) {
            return;
        }
        if (isInCompletionListener()) {
            throw new IllegalStateException("close() from a CompletionListener of its own session");
        }
        if (isDeliveryThread()) {
            throw new IllegalStateException("close() from a MessageListener of its own session; close it from "
                    + "another thread, or close the consumer instead");
        }
        awaitAsyncSends(null);
        deliveryLock.lock();
        try {
            closed = true;
        } finally {
            deliveryLock.unlock();
        }
        for (MillraceQueueBrowser b : browsers) {
            b.close();
        }
        for (MillraceMessageConsumer c : consumers) {
            c.closeForSession();
        }
        for (MillraceMessageProducer p : producers) {
            p.closeForSession();
        }
        if (transaction != null) {
            transaction.close(); // an open transaction is rolled back; consumed queue messages were released above
        }
        synchronized (unacknowledged) {
            unacknowledged.clear();
        }
        deliveryExecutor.shutdown();
        connection.removeSession(this);
    }

    /** Whether the calling thread runs one of this session's CompletionListeners. */
    boolean isInCompletionListener() {
        return isDeliveryThread() && asyncSends.inListener();
    }

    /** Whether the calling thread runs one of this session's MessageListeners. */
    boolean isInMessageListener() {
        return isDeliveryThread() && !asyncSends.inListener();
    }

    @Override
    public MessageListener getMessageListener() throws JMSException {
        checkClosed();
        return null;
    }

    @Override
    /**
     * Session message listeners (the ServerSession facility of application servers) are not supported: setting one
     * fails. Clearing it ({@code null}, which {@link #getMessageListener} already returns) is allowed, because session
     * pools such as pooled-jms clear it whenever a session returns to the pool.
     */
    public void setMessageListener(MessageListener listener) throws JMSException {
        checkClosed();
        if (listener != null) {
            throw new JMSException("session message listeners are for application servers; not supported");
        }
    }

    @Override
    public void run() {
        throw new UnsupportedOperationException("session message listeners are not supported");
    }

    // ---- producers

    @Override
    public MessageProducer createProducer(Destination destination) throws JMSException {
        checkClosed();
        MillraceDestination d = MillraceDestination.from(destination);
        if (d != null && !(d instanceof MillraceTemporaryQueue || d instanceof MillraceTemporaryTopic)) {
            connection.destinations().ensure(d.getName(), d instanceof Queue);
        }
        MillraceMessageProducer p = new MillraceMessageProducer(this, d);
        producers.add(p);
        return p;
    }

    @Override
    public QueueSender createSender(Queue queue) throws JMSException {
        checkClosed();
        domain.checkQueueMethod("createSender");
        return (QueueSender) createProducer(queue);
    }

    @Override
    public TopicPublisher createPublisher(Topic topic) throws JMSException {
        checkClosed();
        domain.checkTopicMethod("createPublisher");
        return (TopicPublisher) createProducer(topic);
    }

    // ---- consumers

    @Override
    public MessageConsumer createConsumer(Destination destination) throws JMSException {
        return createConsumer(destination, null, false);
    }

    @Override
    public MessageConsumer createConsumer(Destination destination, String messageSelector) throws JMSException {
        return createConsumer(destination, messageSelector, false);
    }

    @Override
    public MessageConsumer createConsumer(Destination destination, String messageSelector, boolean noLocal)
            throws JMSException {
        checkClosed();
        MillraceDestination d = consumable(destination);
        Selector selector = MessageSelectors.compile(messageSelector);
        return add(MillraceMessageConsumer.create(this, d, null, noLocal, selector));
    }

    private MillraceMessageConsumer add(MillraceMessageConsumer c) {
        consumers.add(c);
        return c;
    }

    private MillraceDestination consumable(Destination destination) throws JMSException {
        if (destination == null) {
            throw new InvalidDestinationException("destination must not be null");
        }
        MillraceDestination d = MillraceDestination.from(destination);
        if ((d instanceof MillraceTemporaryQueue || d instanceof MillraceTemporaryTopic)
                && !connection.isOwnTemporary(d.getName())) {
            throw new InvalidDestinationException("temporary destination " + d.getName()
                    + " can only be consumed by the connection that created it");
        }
        return d;
    }


    @Override
    public MessageConsumer createSharedConsumer(Topic topic, String sharedSubscriptionName) throws JMSException {
        return createSharedConsumer(topic, sharedSubscriptionName, null);
    }

    @Override
    public MessageConsumer createSharedConsumer(Topic topic, String sharedSubscriptionName, String messageSelector)
            throws JMSException {
        return createShared(topic, sharedSubscriptionName, messageSelector, false);
    }

    /** A consumer on a shared subscription, durable or not; see {@link MillraceMessageConsumer#createShared}. */
    private MessageConsumer createShared(Topic topic, String name, String messageSelector, boolean durable)
            throws JMSException {
        checkClosed();
        domain.checkTopicMethod(durable ? "createSharedDurableConsumer" : "createSharedConsumer");
        MillraceDestination d = consumable(topic);
        if (!(d instanceof Topic)) {
            throw new InvalidDestinationException(d + " is not a topic");
        }
        if (name == null || name.isEmpty()) {
            throw new JMSException("a shared subscription needs a name");
        }
        Selector selector = MessageSelectors.compile(messageSelector);
        if (durable && connection.getClientID() != null && connection.hasActiveDurable(name)) {
            throw new JMSException("an unshared durable subscription " + name + " is active for client id "
                    + connection.getClientID() + "; a shared one may not have the same name");
        }
        return add(MillraceMessageConsumer.createShared(this, d, name, durable, selector));
    }

    @Override
    public TopicSubscriber createDurableSubscriber(Topic topic, String name) throws JMSException {
        return createDurableSubscriber(topic, name, null, false);
    }

    @Override
    public TopicSubscriber createDurableSubscriber(Topic topic, String name, String messageSelector,
                                                   boolean noLocal) throws JMSException {
        checkClosed();
        domain.checkTopicMethod("createDurableSubscriber");
        MillraceDestination d = consumable(topic);
        Selector selector = MessageSelectors.compile(messageSelector);
        if (name == null || name.isEmpty()) {
            throw new JMSException("a durable subscription needs a name");
        }
        if (connection.getClientID() == null) {
            throw new IllegalStateException("a durable subscription needs the connection's client id to be set");
        }
        if (connection.hasActiveDurable(name)) {
            throw new IllegalStateException("durable subscription " + name + " already has an active consumer");
        }
        if (connection.sharedSubscriptions().isOpen(SharedSubscriptions.group(true, connection.getClientID(), name))) {
            throw new JMSException("a shared durable subscription " + name + " is active for client id "
                    + connection.getClientID() + "; an unshared one may not have the same name");
        }
        return add(MillraceMessageConsumer.create(this, d, name, noLocal, selector));
    }

    @Override
    public MessageConsumer createDurableConsumer(Topic topic, String name) throws JMSException {
        return createDurableConsumer(topic, name, null, false);
    }

    @Override
    public MessageConsumer createDurableConsumer(Topic topic, String name, String messageSelector, boolean noLocal)
            throws JMSException {
        checkClosed();
        domain.checkTopicMethod("createDurableConsumer");
        return createDurableSubscriber(topic, name, messageSelector, noLocal);
    }

    @Override
    public MessageConsumer createSharedDurableConsumer(Topic topic, String name) throws JMSException {
        return createSharedDurableConsumer(topic, name, null);
    }

    @Override
    public MessageConsumer createSharedDurableConsumer(Topic topic, String name, String messageSelector)
            throws JMSException {
        return createShared(topic, name, messageSelector, true);
    }

    /** The consumer group of durable subscription {@code name} of this connection's client id. */
    String durableGroup(String name) throws JMSException {
        return "millrace.sub." + connection.getClientID() + "." + name;
    }

    /**
     * Deletes durable subscription {@code name}: the unshared one of this client id and the shared durable one of this
     * client id (or of no client id), whichever exist. Either must have no active consumer, in any connection for a
     * shared one.
     */
    @Override
    public void unsubscribe(String name) throws JMSException {
        checkClosed();
        domain.checkTopicMethod("unsubscribe");
        String clientId = connection.getClientID();
        String sharedGroup = SharedSubscriptions.group(true, clientId, name);
        if ((clientId != null && connection.hasActiveDurable(name))
                || connection.sharedSubscriptions().isOpen(sharedGroup)) {
            throw new IllegalStateException("durable subscription " + name + " has an active consumer");
        }
        boolean deleted = connection.sharedSubscriptions().delete(sharedGroup);
        if (clientId != null) {
            deleted |= connection.destinations().deleteGroup(durableGroup(name));
        }
        if (!deleted) {
            throw new InvalidDestinationException("there is no durable subscription " + name + " for client id "
                    + clientId);
        }
    }

    @Override
    public QueueReceiver createReceiver(Queue queue) throws JMSException {
        return createReceiver(queue, null);
    }

    @Override
    public QueueReceiver createReceiver(Queue queue, String messageSelector) throws JMSException {
        checkClosed();
        domain.checkQueueMethod("createReceiver");
        return (QueueReceiver) createConsumer(queue, messageSelector);
    }

    @Override
    public TopicSubscriber createSubscriber(Topic topic) throws JMSException {
        return createSubscriber(topic, null, false);
    }

    @Override
    public TopicSubscriber createSubscriber(Topic topic, String messageSelector, boolean noLocal)
            throws JMSException {
        checkClosed();
        domain.checkTopicMethod("createSubscriber");
        return (TopicSubscriber) createConsumer(topic, messageSelector, noLocal);
    }

    @Override
    public QueueBrowser createBrowser(Queue queue) throws JMSException {
        return createBrowser(queue, null);
    }

    @Override
    public QueueBrowser createBrowser(Queue queue, String messageSelector) throws JMSException {
        checkClosed();
        domain.checkQueueMethod("createBrowser");
        MillraceDestination d = consumable(queue);
        dev.millrace.protocol.selector.Selector selector = MessageSelectors.compile(messageSelector);
        if (!(d instanceof Queue)) {
            throw new InvalidDestinationException(d + " is not a queue");
        }
        connection.destinations().ensure(d.getName(), true);
        MillraceQueueBrowser b = new MillraceQueueBrowser(this, (Queue) d, selector);
        browsers.add(b);
        return b;
    }

    // ---- destinations

    @Override
    public Queue createQueue(String queueName) throws JMSException {
        checkClosed();
        domain.checkQueueMethod("createQueue");
        MillraceDestination.validateName(queueName);
        return new MillraceQueue(queueName);
    }

    @Override
    public Topic createTopic(String topicName) throws JMSException {
        checkClosed();
        domain.checkTopicMethod("createTopic");
        MillraceDestination.validateName(topicName);
        return new MillraceTopic(topicName);
    }

    @Override
    public TemporaryQueue createTemporaryQueue() throws JMSException {
        checkClosed();
        domain.checkQueueMethod("createTemporaryQueue");
        connection.prepareTemporary();
        String name = connection.newTemporaryName("queue");
        connection.destinations().create(name, 1);
        connection.addTemporary(name);
        return new MillraceTemporaryQueue(name, connection);
    }

    @Override
    public TemporaryTopic createTemporaryTopic() throws JMSException {
        checkClosed();
        domain.checkTopicMethod("createTemporaryTopic");
        connection.prepareTemporary();
        String name = connection.newTemporaryName("topic");
        connection.destinations().create(name, 1);
        connection.addTemporary(name);
        return new MillraceTemporaryTopic(name, connection);
    }
}
