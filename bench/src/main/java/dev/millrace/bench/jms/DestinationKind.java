package dev.millrace.bench.jms;

import java.util.Locale;

import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Session;

/** A queue or a topic, made by name through a session (created on first use by both brokers). Immutable. */
enum DestinationKind {
    QUEUE, TOPIC;

    Destination create(Session session, String name) throws JMSException {
        return this == QUEUE ? session.createQueue(name) : session.createTopic(name);
    }

    /** "queue" or "topic", as on the command line and in the tables. */
    String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    static DestinationKind of(String label) {
        for (DestinationKind kind : values()) {
            if (kind.label().equals(label)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown destination kind '" + label + "': expected queue or topic");
    }
}
