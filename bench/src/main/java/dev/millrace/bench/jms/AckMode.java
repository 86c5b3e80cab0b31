package dev.millrace.bench.jms;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.Session;

/**
 * How a consumer of the throughput runs settles what it receives: AUTO_ACKNOWLEDGE; CLIENT_ACKNOWLEDGE with
 * {@code acknowledge()} on every {@link #BATCH}-th message (and the last); or a transacted session that commits every
 * {@link #BATCH} messages (and after the last). Immutable.
 */
enum AckMode {
    AUTO("AUTO_ACKNOWLEDGE"),
    CLIENT("CLIENT_ACKNOWLEDGE, acknowledge every " + AckMode.BATCH),
    TRANSACTED("transacted, commit every " + AckMode.BATCH);

    /** Messages per acknowledge or commit. */
    static final int BATCH = 100;

    private final String description;

    AckMode(String description) {
        this.description = description;
    }

    String description() {
        return description;
    }

    Session createSession(jakarta.jms.Connection connection) throws JMSException {
        return switch (this) {
            case AUTO -> connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            case CLIENT -> connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
            case TRANSACTED -> connection.createSession(true, Session.SESSION_TRANSACTED);
        };
    }

    /** Settles after the {@code received}-th message ({@code message}) of {@code total}, as the mode says. */
    void settle(Session session, Message message, long received, long total) throws JMSException {
        boolean due = received % BATCH == 0 || received == total;
        if (!due) {
            return;
        }
        if (this == CLIENT) {
            message.acknowledge();
        } else if (this == TRANSACTED) {
            session.commit();
        }
    }
}
