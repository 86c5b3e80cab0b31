package dev.millrace.samples.plainjms;

import java.util.ArrayList;
import java.util.List;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * Point to point: sends text messages to a queue first, and only then creates the queue's consumer, which still
 * receives them (a queue keeps what no consumer took yet). Not thread-safe; one call uses one connection.
 */
final class QueueSendReceive {

    private QueueSendReceive() {
    }

    /**
     * Sends {@code bodies} to {@code queue}, then receives as many messages, waiting at most {@code timeoutMs} for
     * each. Returns the texts received, in order; fewer than sent if one did not come in time.
     */
    static List<String> sendThenReceive(ConnectionFactory factory, Queue queue, List<String> bodies, long timeoutMs)
            throws JMSException {
        try (Connection connection = factory.createConnection()) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = session.createProducer(queue);
            for (String body : bodies) {
                producer.send(session.createTextMessage(body));
            }
            MessageConsumer consumer = session.createConsumer(queue);
            connection.start();
            List<String> received = new ArrayList<>();
            while (received.size() < bodies.size()) {
                Message message = consumer.receive(timeoutMs);
                if (message == null) {
                    break;
                }
                received.add(((TextMessage) message).getText());
            }
            return received;
        }
    }
}
