package dev.millrace.samples.mdb;

import jakarta.annotation.Resource;
import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.EJB;
import jakarta.ejb.MessageDriven;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.jms.Queue;

/**
 * Processes the orders of queue {@code orders}, found through {@code destinationLookup} (the resource adapter's
 * administered object at {@code java:/jms/millrace/queue/orders}), up to four at once, over connections configured
 * like the pooled connection factory's ({@code connectionFactoryLookup}: same brokers).
 *
 * <p>Each delivery runs in a container-managed transaction, in which the bean sends the confirmation
 * {@code confirmed <id>;<quantity>} to queue {@code order-confirmations} through the pooled connection factory, then
 * books the order. An order with a quantity below 1 cannot be booked: the bean throws after having sent its
 * confirmation, the container rolls the transaction back, so the confirmation is never seen and the order is
 * delivered again; after {@code maxDeliveries} (3) deliveries the broker moves it to {@code orders.DLQ}. Every
 * delivery is recorded in the {@link DeliveryLog}.
 */
@MessageDriven(name = "OrderProcessor", activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationLookup",
                propertyValue = "java:/jms/millrace/queue/orders"),
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "connectionFactoryLookup",
                propertyValue = "java:/jms/millrace/ConnectionFactory"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "4"),
        @ActivationConfigProperty(propertyName = "maxDeliveries", propertyValue = "3")})
public class OrderProcessor implements MessageListener {

    @Resource(lookup = "java:/jms/millrace/ConnectionFactory")
    private ConnectionFactory factory;

    @Resource(lookup = "java:/jms/millrace/queue/order-confirmations")
    private Queue confirmations;

    @EJB
    private DeliveryLog log;

    @Override
    public void onMessage(Message message) {
        Order order;
        try {
            String text = message.getBody(String.class);
            log.record(text, message.getIntProperty("JMSXDeliveryCount"), message.getJMSRedelivered());
            order = Order.parse(text);
        } catch (JMSException e) {
            throw new IllegalStateException("cannot read " + message, e);
        }
        try (JMSContext context = factory.createContext()) {
            context.createProducer().setProperty("orderId", order.id())
                    .send(confirmations, "confirmed " + order.toText());
        }
        book(order);
    }

    /** Books the order; stands for the work that can fail after the confirmation was sent. */
    private static void book(Order order) {
        if (order.quantity() < 1) {
            throw new IllegalArgumentException("cannot book " + order + ": quantity must be at least 1");
        }
    }
}
