package dev.millrace.chaos;

import java.util.HashMap;
import java.util.Map;

import jakarta.jms.JMSException;
import jakarta.jms.Message;

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

    static String id(Message message) throws JMSException {
        return message.getStringProperty(ID);
    }

    static boolean flagged(Message message) throws JMSException {
        return message.getJMSRedelivered() || message.getIntProperty("JMSXDeliveryCount") > 1;
    }
}
