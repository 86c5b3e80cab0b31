package dev.millrace.ra.it.app;

import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;

/** Sends a text to a queue through the resource adapter's connection factory, in the caller's transaction. */
public final class Forwarding {

    private Forwarding() {
    }

    public static void forward(ConnectionFactory factory, String queue, String body) {
        try (JMSContext context = factory.createContext()) {
            context.createProducer().send(context.createQueue(queue), body);
        }
    }
}
