package dev.millrace.jms;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import jakarta.jms.IllegalStateException;
import jakarta.jms.IllegalStateRuntimeException;
import jakarta.jms.InvalidClientIDException;
import jakarta.jms.InvalidClientIDRuntimeException;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.InvalidDestinationRuntimeException;
import jakarta.jms.InvalidSelectorException;
import jakarta.jms.InvalidSelectorRuntimeException;
import jakarta.jms.JMSException;
import jakarta.jms.JMSRuntimeException;
import jakarta.jms.JMSSecurityException;
import jakarta.jms.JMSSecurityRuntimeException;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageFormatRuntimeException;
import jakarta.jms.MessageNotWriteableException;
import jakarta.jms.MessageNotWriteableRuntimeException;
import jakarta.jms.ResourceAllocationException;
import jakarta.jms.ResourceAllocationRuntimeException;
import jakarta.jms.TransactionInProgressException;
import jakarta.jms.TransactionInProgressRuntimeException;
import jakarta.jms.TransactionRolledBackException;
import jakarta.jms.TransactionRolledBackRuntimeException;

/**
 * The API boundary's exception conversions: failures of the Kafka clients become {@link JMSException}s (once, where
 * the provider calls them), and the simplified API turns each JMSException into its {@link JMSRuntimeException}
 * counterpart. Stateless.
 */
public final class JmsExceptions {

    private JmsExceptions() {
    }

    /** A JMSException for a failure of a broker call; a JMSException passes through, wrapped causes are unwrapped. */
    public static JMSException fromClient(String what, Throwable failure) {
        Throwable t = failure;
        while ((t instanceof ExecutionException || t instanceof java.util.concurrent.CompletionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof JMSException) {
            return (JMSException) t;
        }
        JMSException e;
        if (t instanceof org.apache.kafka.common.errors.AuthenticationException) {
            // SASL (wrong password, unknown user, mechanism not offered) or TLS (untrusted certificate) refusals
            e = new JMSSecurityException(what + ": the broker refused this client: " + t.getMessage());
        } else if (t instanceof org.apache.kafka.common.errors.AuthorizationException) {
            // an ACL refused the operation (topic, group, transactional id or cluster): named by what
            e = new JMSSecurityException(what + ": not authorized: " + t.getMessage(),
                    t.getClass().getSimpleName());
        } else if (t instanceof InvalidTopicException || t instanceof UnknownTopicOrPartitionException) {
            e = new InvalidDestinationException(what + ": " + t.getMessage());
        } else if (t instanceof TimeoutException || t instanceof org.apache.kafka.common.errors.TimeoutException) {
            e = new JMSException(what + ": the broker did not answer in time (" + t.getMessage() + ")");
        } else {
            e = new JMSException(what + ": " + t);
        }
        if (t instanceof Exception) {
            e.setLinkedException((Exception) t);
        }
        e.initCause(t);
        return e;
    }

    /** The runtime counterpart of {@code e}, for the simplified API. */
    public static JMSRuntimeException toRuntime(JMSException e) {
        JMSRuntimeException r;
        String m = e.getMessage();
        String c = e.getErrorCode();
        if (e instanceof IllegalStateException) {
            r = new IllegalStateRuntimeException(m, c, e);
        } else if (e instanceof InvalidClientIDException) {
            r = new InvalidClientIDRuntimeException(m, c, e);
        } else if (e instanceof InvalidDestinationException) {
            r = new InvalidDestinationRuntimeException(m, c, e);
        } else if (e instanceof InvalidSelectorException) {
            r = new InvalidSelectorRuntimeException(m, c, e);
        } else if (e instanceof JMSSecurityException) {
            r = new JMSSecurityRuntimeException(m, c, e);
        } else if (e instanceof MessageFormatException) {
            r = new MessageFormatRuntimeException(m, c, e);
        } else if (e instanceof MessageNotWriteableException) {
            r = new MessageNotWriteableRuntimeException(m, c, e);
        } else if (e instanceof ResourceAllocationException) {
            r = new ResourceAllocationRuntimeException(m, c, e);
        } else if (e instanceof TransactionInProgressException) {
            r = new TransactionInProgressRuntimeException(m, c, e);
        } else if (e instanceof TransactionRolledBackException) {
            r = new TransactionRolledBackRuntimeException(m, c, e);
        } else {
            r = new JMSRuntimeException(m, c, e);
        }
        return r;
    }

    /** An action of the simplified API, run with its JMSException converted. */
    @FunctionalInterface
    public interface JmsAction<T> {
        T run() throws JMSException;
    }

    /** Runs {@code action}, converting a JMSException with {@link #toRuntime}. */
    public static <T> T runtime(JmsAction<T> action) {
        try {
            return action.run();
        } catch (JMSException e) {
            throw toRuntime(e);
        }
    }
}
