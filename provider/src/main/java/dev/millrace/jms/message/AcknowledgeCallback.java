package dev.millrace.jms.message;

import jakarta.jms.JMSException;

/**
 * What {@link jakarta.jms.Message#acknowledge()} does for a received message: the session that delivered it supplies
 * one (acknowledging every message it has delivered, in CLIENT_ACKNOWLEDGE mode, or nothing in the other modes).
 * Messages without a callback (created by the application) acknowledge nothing.
 */
@FunctionalInterface
public interface AcknowledgeCallback {

    /**
     * @param message the message {@code acknowledge()} was called on
     * @throws JMSException for example {@code IllegalStateException} when the session is closed
     */
    void acknowledge(MillraceMessage message) throws JMSException;
}
