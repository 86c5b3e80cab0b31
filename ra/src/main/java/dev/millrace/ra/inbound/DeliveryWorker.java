package dev.millrace.ra.inbound;

import java.lang.reflect.Method;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.millrace.jms.MillraceXAConnectionFactory;
import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageListener;
import jakarta.jms.Session;
import jakarta.jms.XAConnection;
import jakarta.jms.XASession;
import jakarta.resource.ResourceException;
import jakarta.resource.spi.endpoint.MessageEndpoint;
import jakarta.resource.spi.endpoint.MessageEndpointFactory;
import jakarta.resource.spi.work.Work;

/**
 * One of an activation's {@code maxSession} delivery loops, run as a {@link Work} on the container's WorkManager:
 * it owns one connection, one session, one consumer and one message endpoint, and delivers one message at a time.
 *
 * <pre>
 *   transacted bean (container-managed transaction on onMessage):
 *     XA connection, XA session; endpoint = factory.createEndpoint(DeliveryXAResource over the session's)
 *     loop: endpoint.beforeDelivery(onMessage)          the container starts a transaction, enlists the XAResource
 *           message = consumer.receive(receiveTimeoutMs) received in the transaction's branch (only if enlisted)
 *           endpoint.onMessage(message)                   (when one came); it threw: the branch is made to fail
 *           endpoint.afterDelivery()                      commit: acknowledged; the bean threw or set rollback-only:
 *                                                         rolled back, the message is delivered again
 *                                                         (JMSRedelivered=true) or dead-lettered after maxDeliveries
 *   bean without a transaction:
 *     connection, CLIENT_ACKNOWLEDGE session; endpoint = factory.createEndpoint(null)
 *     loop: message = consumer.receive(receiveTimeoutMs)
 *           endpoint.onMessage(message); message.acknowledge()    the bean threw: session.recover() (delivered again)
 * </pre>
 *
 * A failure of the connection (the cluster unreachable past the provider's failover window) or of the endpoint
 * closes everything and starts again after {@code receiveTimeoutMs}. {@link #release()} (deactivation, or the
 * container shutting down) ends the loop after the current delivery: at most {@code receiveTimeoutMs} later.
 *
 * <p>Its loop runs on one container thread; {@link #release()} and {@link #awaitEnd} come from others.
 */
final class DeliveryWorker implements Work {

    private static final System.Logger LOG = System.getLogger(DeliveryWorker.class.getName());

    private final EndpointActivation activation;
    private final int index;
    private final CountDownLatch released = new CountDownLatch(1);
    private final CountDownLatch ended = new CountDownLatch(1);
    private volatile boolean running = true;
    private Connection connection;
    private Session session;
    private MessageConsumer consumer;
    private MessageEndpoint endpoint;
    private DeliveryXAResource resource;

    DeliveryWorker(EndpointActivation activation, int index) {
        this.activation = activation;
        this.index = index;
    }

    @Override
    public void run() {
        try {
            while (running) {
                try {
                    open();
                    while (running) {
                        deliverOne();
                    }
                } catch (JMSException | ResourceException | RuntimeException e) {
                    if (running) {
                        LOG.log(System.Logger.Level.WARNING, this + " failed, starting again in "
                                + activation.receiveTimeoutMs() + " ms: " + e, e);
                    }
                } finally {
                    closeAll();
                }
                if (running) {
                    released.await(activation.receiveTimeoutMs(), TimeUnit.MILLISECONDS);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            ended.countDown();
        }
    }

    private void open() throws JMSException, ResourceException {
        MillraceXAConnectionFactory factory = activation.connectionFactory();
        MessageEndpointFactory endpoints = activation.endpointFactory();
        if (activation.isTransacted()) {
            XAConnection xa = factory.createXAConnection();
            connection = xa;
            XASession xaSession = xa.createXASession();
            session = xaSession;
            consumer = activation.subscription().consumer(xaSession);
            resource = new DeliveryXAResource(xaSession.getXAResource());
            endpoint = endpoints.createEndpoint(resource);
        } else {
            connection = factory.createConnection();
            session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
            consumer = activation.subscription().consumer(session);
            endpoint = endpoints.createEndpoint(null);
        }
        connection.start();
    }

    private void deliverOne() throws JMSException, ResourceException {
        Method onMessage = EndpointActivation.ON_MESSAGE;
        if (activation.isTransacted()) {
            try {
                endpoint.beforeDelivery(onMessage);
            } catch (NoSuchMethodException e) {
                throw new IllegalStateException("the endpoint has no " + onMessage, e);
            }
            boolean enlisted = resource.isStarted();
            boolean failed = false;
            try {
                if (enlisted) {
                    Message message = consumer.receive(activation.receiveTimeoutMs());
                    if (message != null && !deliver(message)) {
                        failed = true;
                        resource.markRollbackOnly();
                    }
                }
            } finally {
                try {
                    endpoint.afterDelivery();
                } catch (ResourceException | RuntimeException e) {
                    if (!failed) {
                        throw e;
                    }
                    // the branch was made to fail: the transaction rolled back, as it should
                    LOG.log(System.Logger.Level.DEBUG, this + ": rolled back after a failed delivery: " + e);
                }
            }
            if (!enlisted) {
                LOG.log(System.Logger.Level.WARNING, this + ": the container began no transaction with this"
                        + " session's XAResource; not receiving, trying again in " + activation.receiveTimeoutMs()
                        + " ms");
                awaitRelease();
            }
        } else {
            Message message = consumer.receive(activation.receiveTimeoutMs());
            if (message == null) {
                return;
            }
            if (deliver(message)) {
                message.acknowledge();
            } else {
                session.recover();
            }
        }
    }

    private void awaitRelease() {
        try {
            released.await(activation.receiveTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    /** Hands {@code message} to the bean; false if it threw (the container marked a transaction rollback-only). */
    private boolean deliver(Message message) {
        try {
            ((MessageListener) endpoint).onMessage(message);
            return true;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.INFO, this + ": the bean threw on " + message + ", delivering it again: " + e);
            return false;
        }
    }

    private void closeAll() {
        if (endpoint != null) {
            endpoint.release();
            endpoint = null;
        }
        if (connection != null) {
            try {
                connection.close();
            } catch (JMSException e) {
                LOG.log(System.Logger.Level.DEBUG, this + ": close failed: " + e, e);
            }
            connection = null;
        }
        session = null;
        consumer = null;
        resource = null;
    }

    /** Ends the loop after the current delivery. */
    @Override
    public void release() {
        running = false;
        released.countDown();
    }

    /** Waits for the loop to end; true if it did within {@code timeoutMs}. */
    boolean awaitEnd(long timeoutMs) throws InterruptedException {
        return ended.await(timeoutMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public String toString() {
        return "DeliveryWorker[" + index + " of " + activation + "]";
    }
}
