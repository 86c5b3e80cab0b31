package dev.millrace.ra.it.app;

import jakarta.annotation.Resource;
import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/**
 * Without a container transaction on {@code it.notx}: throws on a first delivery, and forwards
 * {@code body:redelivered} to {@code it.notx.done} on the next, so the forward shows that a bean that threw got the
 * message again.
 */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "destination", propertyValue = "it.notx"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "1")})
@TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
public class NoTransactionMdb implements MessageListener {

    @Resource(name = AppResources.CONNECTION_FACTORY)
    private ConnectionFactory factory;

    @Override
    public void onMessage(Message message) {
        try {
            if (!message.getJMSRedelivered()) {
                throw new IllegalStateException("first delivery: thrown on purpose");
            }
            Forwarding.forward(factory, "it.notx.done", message.getBody(String.class) + ":"
                    + message.getJMSRedelivered());
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
    }
}
