package dev.millrace.samples.plainjms;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TextMessage;

/**
 * The client side of request/reply: sends each request with {@code JMSReplyTo} = a temporary queue of its own
 * connection and waits for the answer whose {@code JMSCorrelationID} is the request's {@code JMSMessageID}. The
 * temporary queue lives as long as the connection. Not thread-safe: one request at a time.
 */
final class PriceRequester implements AutoCloseable {

    private final Connection connection;
    private final Session session;
    private final MessageProducer requests;
    private final TemporaryQueue replyQueue;
    private final MessageConsumer replies;

    PriceRequester(ConnectionFactory factory, Queue requestQueue) throws JMSException {
        connection = factory.createConnection();
        try {
            session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            requests = session.createProducer(requestQueue);
            replyQueue = session.createTemporaryQueue();
            replies = session.createConsumer(replyQueue);
            connection.start();
        } catch (JMSException e) {
            connection.close();
            throw e;
        }
    }

    /**
     * Asks for the price of {@code item}; returns the answer's text, or null if none came within {@code timeoutMs}.
     *
     * @throws IllegalStateException if an answer came that belongs to another request
     */
    String request(String item, long timeoutMs) throws JMSException {
        TextMessage request = session.createTextMessage(item);
        request.setJMSReplyTo(replyQueue);
        requests.send(request);
        Message reply = replies.receive(timeoutMs);
        if (reply == null) {
            return null;
        }
        if (!request.getJMSMessageID().equals(reply.getJMSCorrelationID())) {
            throw new IllegalStateException("reply correlated to " + reply.getJMSCorrelationID() + ", expected "
                    + request.getJMSMessageID());
        }
        return ((TextMessage) reply).getText();
    }

    @Override
    public void close() throws JMSException {
        connection.close();
    }
}
