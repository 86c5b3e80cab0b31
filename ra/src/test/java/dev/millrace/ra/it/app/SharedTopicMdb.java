package dev.millrace.ra.it.app;

import jakarta.annotation.Resource;
import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/**
 * A shared non-durable subscription {@code it-news} on topic {@code it.news} read by two sessions; forwards each
 * message to {@code it.news.done}.
 */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Topic"),
        @ActivationConfigProperty(propertyName = "destination", propertyValue = "it.news"),
        @ActivationConfigProperty(propertyName = "subscriptionName", propertyValue = "it-news"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "2")})
public class SharedTopicMdb implements MessageListener {

    @Resource(name = AppResources.CONNECTION_FACTORY)
    private ConnectionFactory factory;

    @Override
    public void onMessage(Message message) {
        try {
            Forwarding.forward(factory, "it.news.done", message.getBody(String.class));
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
    }
}
