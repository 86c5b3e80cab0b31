package dev.millrace.ra.inbound;

import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

/**
 * The XAResource a {@link DeliveryWorker} gives the container with its endpoint: its XA session's, with two things
 * the worker needs to know or decide about each delivery's transaction.
 * <ul>
 *   <li>{@link #isStarted()}: whether the container enlisted it (start ... end) in the transaction that
 *       {@code beforeDelivery} began. Only then does the worker receive: outside a branch the XA session would
 *       acknowledge the message on receipt, and a failed delivery would lose it.</li>
 *   <li>{@link #markRollbackOnly()}: the bean threw. Its transaction must not commit the receipt, even when the
 *       exception came from the container's endpoint before the bean's transaction interceptor could mark it (an
 *       endpoint being undeployed): the branch is ended with TMFAIL instead of TMSUCCESS, so it rolls back and the
 *       message is delivered again.</li>
 * </ul>
 * Everything else goes to the session's XAResource as is ({@code isSameRM} unwraps, so the container may join the
 * branch with the outbound connections of the same cluster).
 *
 * <p>Thread-safe: the transaction manager may call it from other threads than the worker's.
 */
final class DeliveryXAResource implements XAResource {

    private final XAResource delegate;
    private volatile boolean started;
    private volatile boolean rollbackOnly;

    DeliveryXAResource(XAResource delegate) {
        this.delegate = delegate;
    }

    boolean isStarted() {
        return started;
    }

    void markRollbackOnly() {
        rollbackOnly = true;
    }

    @Override
    public void start(Xid xid, int flags) throws XAException {
        delegate.start(xid, flags);
        if (flags != TMRESUME && flags != TMJOIN) {
            rollbackOnly = false;
        }
        started = true;
    }

    @Override
    public void end(Xid xid, int flags) throws XAException {
        started = false;
        delegate.end(xid, rollbackOnly && flags == TMSUCCESS ? TMFAIL : flags);
    }

    @Override
    public int prepare(Xid xid) throws XAException {
        return delegate.prepare(xid);
    }

    @Override
    public void commit(Xid xid, boolean onePhase) throws XAException {
        delegate.commit(xid, onePhase);
    }

    @Override
    public void rollback(Xid xid) throws XAException {
        delegate.rollback(xid);
    }

    @Override
    public void forget(Xid xid) throws XAException {
        delegate.forget(xid);
    }

    @Override
    public Xid[] recover(int flag) throws XAException {
        return delegate.recover(flag);
    }

    @Override
    public boolean isSameRM(XAResource other) throws XAException {
        return delegate.isSameRM(other instanceof DeliveryXAResource d ? d.delegate : other);
    }

    @Override
    public int getTransactionTimeout() throws XAException {
        return delegate.getTransactionTimeout();
    }

    @Override
    public boolean setTransactionTimeout(int seconds) throws XAException {
        return delegate.setTransactionTimeout(seconds);
    }

    @Override
    public String toString() {
        return "DeliveryXAResource[" + delegate + "]";
    }
}
