package dev.millrace.ra.it.app;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/**
 * Throws on every message of {@code it.poison}: the container rolls its transaction back, the message comes again
 * (JMSRedelivered=true) and after maxDeliveries=3 the broker moves it to {@code it.poison.DLQ}. Each delivery is
 * recorded as {@code body:redelivered:deliveryCount} for {@link TestServlet}.
 */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "destination", propertyValue = "it.poison"),
        @ActivationConfigProperty(propertyName = "maxDeliveries", propertyValue = "3"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "1")})
public class PoisonMdb implements MessageListener {

    static final List<String> DELIVERIES = new CopyOnWriteArrayList<>();

    @Override
    public void onMessage(Message message) {
        try {
            DELIVERIES.add(message.getBody(String.class) + ":" + message.getJMSRedelivered() + ":"
                    + message.getIntProperty("JMSXDeliveryCount"));
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
        throw new IllegalStateException("poison message: rolled back on purpose");
    }
}
