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
 * Receives from the queue {@link DefinedResourcesBean} defines, found through {@code destinationLookup} (the
 * administered object the container made from the application's {@code @JMSDestinationDefinition}), and forwards each
 * body, in the same transaction, through the defined connection factory to {@code it.defined.done}.
 */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "destinationLookup", propertyValue = DefinedResourcesBean.QUEUE)})
public class DefinedQueueMdb implements MessageListener {

    @Resource(lookup = DefinedResourcesBean.FACTORY)
    private ConnectionFactory factory;

    @Override
    public void onMessage(Message message) {
        try (JMSContext context = factory.createContext()) {
            context.createProducer().send(context.createQueue("it.defined.done"),
                    "looked-up:" + message.getBody(String.class));
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
    }
}
