package dev.millrace.ra.it.app;

import jakarta.annotation.Resource;
import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/** Takes only messages with {@code kind = 'wanted'} from {@code it.selected}; forwards them to {@code it.selected.done}. */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "destination", propertyValue = "it.selected"),
        @ActivationConfigProperty(propertyName = "messageSelector", propertyValue = "kind = 'wanted'"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "1")})
public class SelectorMdb implements MessageListener {

    @Resource(name = AppResources.CONNECTION_FACTORY)
    private ConnectionFactory factory;

    @Override
    public void onMessage(Message message) {
        try {
            Forwarding.forward(factory, "it.selected.done", message.getBody(String.class));
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
    }
}
