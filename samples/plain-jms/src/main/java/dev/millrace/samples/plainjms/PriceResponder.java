package dev.millrace.samples.plainjms;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * The service side of request/reply: listens on a request queue and answers every request on the destination in its
 * {@code JMSReplyTo}, with {@code JMSCorrelationID} set to the request's {@code JMSMessageID} so that the requester
 * can match the answer. The answer is {@code "<item>=<price>"}, the price being the item name's length times 10.
 *
 * <p>Threading: {@code onMessage} runs on the session's delivery thread, which alone uses the session and its
 * producer; {@link #close} may be called from any thread.
 */
final class PriceResponder implements MessageListener, AutoCloseable {

    private final Connection connection;
    private final Session session;
    private final MessageProducer replies;

    PriceResponder(ConnectionFactory factory, Queue requests) throws JMSException {
        connection = factory.createConnection();
        try {
            session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            replies = session.createProducer(null);
            session.createConsumer(requests).setMessageListener(this);
            connection.start();
        } catch (JMSException e) {
            connection.close();
            throw e;
        }
    }

    static String price(String item) {
        return item + "=" + item.length() * 10;
    }

    @Override
    public void onMessage(Message request) {
        try {
            Destination replyTo = request.getJMSReplyTo();
            if (replyTo == null) {
                System.err.println("request " + request.getJMSMessageID() + " has no JMSReplyTo; not answered");
                return;
            }
            TextMessage reply = session.createTextMessage(price(((TextMessage) request).getText()));
            reply.setJMSCorrelationID(request.getJMSMessageID());
            replies.send(replyTo, reply);
        } catch (JMSException e) {
            throw new IllegalStateException("could not answer a request", e); // redelivered: the queue keeps it
        }
    }

    @Override
    public void close() throws JMSException {
        connection.close();
    }
}
