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
 * A durable subscription {@code it-prices} of client id {@code it-prices-client} on topic {@code it.prices}; forwards
 * each message to queue {@code it.prices.done} in its transaction.
 */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Topic"),
        @ActivationConfigProperty(propertyName = "destination", propertyValue = "it.prices"),
        @ActivationConfigProperty(propertyName = "subscriptionDurability", propertyValue = "Durable"),
        @ActivationConfigProperty(propertyName = "subscriptionName", propertyValue = "it-prices"),
        @ActivationConfigProperty(propertyName = "clientId", propertyValue = "it-prices-client"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "1")})
public class DurableTopicMdb implements MessageListener {

    @Resource(name = AppResources.CONNECTION_FACTORY)
    private ConnectionFactory factory;

    @Override
    public void onMessage(Message message) {
        try (JMSContext context = factory.createContext()) {
            context.createProducer().send(context.createQueue("it.prices.done"), message.getBody(String.class));
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
    }
}
