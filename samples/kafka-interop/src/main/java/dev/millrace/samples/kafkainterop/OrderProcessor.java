package dev.millrace.samples.kafkainterop;

import java.nio.charset.StandardCharsets;

import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * The JMS side: a MessageListener on the JMS queue named like the Kafka topic the orders were written to. A Kafka
 * record arrives as a {@link TextMessage} when its producer marked it with header {@code jms.body.type = text}, and
 * as a {@link BytesMessage} otherwise; its key is the message's {@code JMSXGroupID}. For every order the processor
 * publishes an event to a JMS topic: a TextMessage {@code "processed <order> (<message type>)"} with
 * {@code JMSCorrelationID} = the order id (the record key), which a Kafka consumer finds in header
 * {@code jms.correlation.id}.
 *
 * <p>Threading: {@code onMessage} runs on the session's delivery thread, which alone uses the session and producer.
 */
final class OrderProcessor implements MessageListener, AutoCloseable {

    private final Connection connection;
    private final Session session;
    private final MessageProducer events;

    OrderProcessor(ConnectionFactory factory, String ordersQueue, String eventsTopic) throws JMSException {
        connection = factory.createConnection();
        try {
            session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            events = session.createProducer(session.createTopic(eventsTopic));
            session.createConsumer(session.createQueue(ordersQueue)).setMessageListener(this);
            connection.start();
        } catch (JMSException e) {
            connection.close();
            throw e;
        }
    }

    @Override
    public void onMessage(Message order) {
        try {
            String body;
            String type;
            if (order instanceof TextMessage text) {
                body = text.getText();
                type = "TextMessage";
            } else {
                BytesMessage bytes = (BytesMessage) order;
                byte[] value = new byte[(int) bytes.getBodyLength()];
                bytes.readBytes(value);
                body = new String(value, StandardCharsets.UTF_8);
                type = "BytesMessage";
            }
            String orderId = order.getStringProperty("JMSXGroupID");
            TextMessage event = session.createTextMessage("processed " + body + " (" + type + ")");
            event.setJMSCorrelationID(orderId);
            events.send(event);
        } catch (JMSException e) {
            throw new IllegalStateException("could not process an order", e); // released: the queue delivers it again
        }
    }

    @Override
    public void close() throws JMSException {
        connection.close();
    }
}
