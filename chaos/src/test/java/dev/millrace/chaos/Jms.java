package dev.millrace.chaos;

import java.util.HashMap;
import java.util.Map;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import dev.millrace.jms.MillraceConnectionFactory;

/** The JMS flows' connection factories and message helpers. */
final class Jms {

    /** The message property that carries a flow's message id. */
    static final String ID = "chaosId";

    private Jms() {
    }

    /** A factory for the whole cluster (its bootstrap list), with {@code options} on top of the suite's. */
    static MillraceConnectionFactory factory(String bootstrap, Map<String, String> options) {
        MillraceConnectionFactory factory = new MillraceConnectionFactory(bootstrap);
        Map<String, String> all = new HashMap<>();
        all.put("destinationPartitions", "3");
        all.put("destinationReplicationFactor", "3");
        all.putAll(options);
        factory.setProperties(all);
        return factory;
    }

    /**
     * Sends a text message carrying {@code id} (body and {@link #ID} property) and records it in {@code ledger}:
     * acknowledged once {@code send} returned, a failed send counted (and rethrown for the pacer).
     */
    static void sendTracked(Session session, MessageProducer producer, String id, Ledger ledger) throws JMSException {
        TextMessage message = session.createTextMessage(id);
        message.setStringProperty(ID, id);
        try {
            producer.send(message);
            ledger.acknowledged(id);
        } catch (JMSException | RuntimeException e) {
            ledger.sendFailed();
            throw e;
        }
    }

    static String id(Message message) throws JMSException {
        return message.getStringProperty(ID);
    }

    static boolean flagged(Message message) throws JMSException {
        return message.getJMSRedelivered() || message.getIntProperty("JMSXDeliveryCount") > 1;
    }
}
