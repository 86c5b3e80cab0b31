package dev.millrace.ra.it.app;

import jakarta.annotation.Resource;
import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/**
 * Receives orders from queue {@code it.orders} (container-managed transaction) and forwards each, in the same
 * transaction, through the resource adapter's connection factory to {@code it.processed}.
 */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "destination", propertyValue = "it.orders"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "2")})
public class OrderMdb implements MessageListener {

    @Resource(name = AppResources.CONNECTION_FACTORY)
    private ConnectionFactory factory;

    @Override
    public void onMessage(Message message) {
        try (JMSContext context = factory.createContext()) {
            context.createProducer().send(context.createQueue("it.processed"),
                    "processed:" + message.getBody(String.class));
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
    }
}
