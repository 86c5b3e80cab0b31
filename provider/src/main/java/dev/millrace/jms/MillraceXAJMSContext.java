package dev.millrace.jms;

import javax.transaction.xa.XAResource;

import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.XAJMSContext;

/**
 * A JMSContext over one {@link MillraceXASession}: its work takes part in the XA branches its
 * {@link #getXAResource() XAResource} associates it with; outside them it works as a non-transacted context.
 * {@code commit} and {@code rollback} throw TransactionInProgressRuntimeException. The session is made with the
 * context, so a client id must come from the factory ({@code clientId}), not from {@code setClientID}.
 *
 * <p>Used by one thread at a time, like its session; the XAResource may be called from others.
 */
public class MillraceXAJMSContext extends MillraceJMSContext implements XAJMSContext {

    private final MillraceXASession session;

    MillraceXAJMSContext(MillraceXAConnection connection, MillraceXASession session) throws JMSException {
        super(connection, session);
        this.session = session;
    }

    @Override
    public JMSContext getContext() {
        return this;
    }

    @Override
    public XAResource getXAResource() {
        return session.getXAResource();
    }
}
