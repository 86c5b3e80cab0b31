package dev.millrace.ra.it.app;

import jakarta.annotation.Resource;
import jakarta.ejb.Stateless;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSConnectionFactoryDefinition;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSDestinationDefinition;
import jakarta.jms.Queue;

/**
 * A connection factory and a queue the application defines itself with the standard annotations, on the Millrace
 * adapter, and a container-transaction send through them. The factory names no brokers: it takes the adapter's (the
 * server's {@code millrace.brokers}). The queue's Millrace name is the admin object's {@code name} property:
 * {@code destinationName} is only read by servers whose own JMS adapter the annotation targets (WildFly hands a
 * definition for another adapter its {@code className} and {@code properties} only).
 */
@JMSConnectionFactoryDefinition(name = DefinedResourcesBean.FACTORY, interfaceName = "jakarta.jms.ConnectionFactory",
        resourceAdapter = "millrace-ra")
@JMSDestinationDefinition(name = DefinedResourcesBean.QUEUE, interfaceName = "jakarta.jms.Queue",
        resourceAdapter = "millrace-ra", className = "dev.millrace.ra.admin.MillraceQueueAdminObject",
        destinationName = "it.defined", properties = "name=it.defined")
@Stateless
public class DefinedResourcesBean {

    public static final String FACTORY = "java:app/jms/millrace/DefinedFactory";
    public static final String QUEUE = "java:app/jms/millrace/DefinedQueue";

    @Resource(lookup = FACTORY)
    private ConnectionFactory factory;

    @Resource(lookup = QUEUE)
    private Queue queue;

    /** Sends {@code body} to the defined queue in the caller's (or a new) container transaction. */
    public void send(String body) {
        try (JMSContext context = factory.createContext()) {
            context.createProducer().send(queue, body);
        }
    }
}
