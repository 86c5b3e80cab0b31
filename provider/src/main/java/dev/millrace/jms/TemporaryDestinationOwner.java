package dev.millrace.jms;

import jakarta.jms.JMSException;

/**
 * The connection that created a temporary destination and can delete it. Implementations must be thread-safe:
 * {@code delete()} may be called from any thread.
 */
@FunctionalInterface
public interface TemporaryDestinationOwner {

    /**
     * Deletes the destination.
     *
     * @throws JMSException for example an {@code IllegalStateException} while consumers still use it
     */
    void deleteTemporaryDestination(MillraceDestination destination) throws JMSException;
}
