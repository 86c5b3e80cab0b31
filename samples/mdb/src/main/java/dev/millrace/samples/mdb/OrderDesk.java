package dev.millrace.samples.mdb;

import jakarta.annotation.Resource;
import jakarta.ejb.Stateless;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.Queue;

/**
 * Places orders: each {@link #place} sends one order to the {@code orders} queue in the caller's container
 * transaction (a new one per call when the caller has none, as from {@link OrdersResource}), through the resource
 * adapter's pooled connection factory; the message is visible to the MDB once that transaction commits.
 */
@Stateless
public class OrderDesk {

    @Resource(lookup = "java:/jms/millrace/ConnectionFactory")
    private ConnectionFactory factory;

    /** The resource adapter's administered object for queue {@code orders} (see the sample's ironjacamar.xml). */
    @Resource(lookup = "java:/jms/millrace/queue/orders")
    private Queue orders;

    public void place(Order order) {
        try (JMSContext context = factory.createContext()) {
            context.createProducer().send(orders, order.toText());
        }
    }
}
