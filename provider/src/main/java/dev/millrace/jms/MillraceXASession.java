package dev.millrace.jms;

import java.util.List;
import java.util.concurrent.Future;

import javax.transaction.xa.XAResource;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;

import dev.millrace.jms.wire.Delivery;
import jakarta.jms.JMSException;
import jakarta.jms.QueueSession;
import jakarta.jms.Session;
import jakarta.jms.TopicSession;
import jakarta.jms.TransactionInProgressException;
import jakarta.jms.XAQueueSession;
import jakarta.jms.XASession;
import jakarta.jms.XATopicSession;

/**
 * A session whose work takes part in XA transactions through its {@link #getXAResource() XAResource}.
 *
 * <ul>
 *   <li>While the XAResource has associated the session with a branch (start ... end), its sends go to the
 *       branch's broker transaction and the messages it receives belong to the branch (acknowledged by its commit,
 *       delivered again after its rollback); see {@link XaBranch}.</li>
 *   <li>Outside a branch the session works as a non-transacted session: sends are sent at once and received
 *       messages are acknowledged on delivery, as in AUTO_ACKNOWLEDGE.</li>
 *   <li>{@link #getTransacted} is true and {@link #getAcknowledgeMode} SESSION_TRANSACTED (the XASession
 *       contract); {@link #commit} and {@link #rollback} throw TransactionInProgressException: the transaction
 *       manager completes the work.</li>
 *   <li>Close the session after the branches it worked on are complete: closing it releases the queue messages it
 *       received and has not yet handed to a branch, and a branch whose messages' consumer is closed cannot hold
 *       them at prepare (it rolls back).</li>
 * </ul>
 *
 * <p>Thread safety as for {@link MillraceSession}; the XAResource may be called from other threads.
 */
public class MillraceXASession extends MillraceSession implements XASession, XAQueueSession, XATopicSession {

    private final MillraceXAResource resource;
    private volatile XaBranch branch;

    MillraceXASession(MillraceXAConnection connection, SessionDomain domain) {
        super(connection, Session.SESSION_TRANSACTED, domain);
        this.resource = new MillraceXAResource(this, connection);
    }

    /** The branch the session works on now, or null. */
    XaBranch branch() {
        return branch;
    }

    void associate(XaBranch b) {
        branch = b;
    }

    @Override
    public XAResource getXAResource() {
        return resource;
    }

    @Override
    public Session getSession() throws JMSException {
        checkClosed();
        return this;
    }

    @Override
    public QueueSession getQueueSession() throws JMSException {
        checkClosed();
        return this;
    }

    @Override
    public TopicSession getTopicSession() throws JMSException {
        checkClosed();
        return this;
    }

    @Override
    public boolean getTransacted() throws JMSException {
        checkClosed();
        return true;
    }

    @Override
    public void commit() throws JMSException {
        checkClosed();
        throw new TransactionInProgressException("commit() on an XASession: its transaction manager commits");
    }

    @Override
    public void rollback() throws JMSException {
        checkClosed();
        throw new TransactionInProgressException("rollback() on an XASession: its transaction manager rolls back");
    }

    @Override
    KafkaProducer<byte[], byte[]> producerFor(int deliveryMode) throws JMSException {
        XaBranch b = branch;
        return b != null ? b.producerForSend() : connection().producer(deliveryMode);
    }

    @Override
    boolean sendsInTransaction() {
        return branch != null;
    }

    @Override
    void sentInTransaction(Future<RecordMetadata> send) {
        branch.sent(send);
    }

    @Override
    void afterDelivery(MillraceMessageConsumer consumer, Delivery delivery) throws JMSException {
        if (branch != null) {
            super.afterDelivery(consumer, delivery); // held for the branch (end hands it over)
        } else {
            consumer.acknowledgeLater(List.of(delivery), true);
        }
    }
}
