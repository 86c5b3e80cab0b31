package dev.millrace.ra.it.app;

import jakarta.annotation.Resource;
import jakarta.ejb.SessionContext;
import jakarta.ejb.Stateless;
import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Session;

/**
 * Sends through the resource adapter's connection factory inside the container transaction of each call
 * (REQUIRED), with the simplified or the classic API, and marks the transaction rollback-only when asked.
 */
@Stateless
public class SenderBean {

    @Resource(name = AppResources.CONNECTION_FACTORY)
    private ConnectionFactory factory;

    @Resource
    private SessionContext ejb;

    public void sendWithContext(String queue, String body, boolean rollback) {
        try (JMSContext context = factory.createContext()) {
            context.createProducer().send(context.createQueue(queue), body);
        }
        if (rollback) {
            ejb.setRollbackOnly();
        }
    }

    public void sendWithSession(String queue, String body, boolean rollback) throws JMSException {
        try (Connection connection = factory.createConnection()) {
            // arguments ignored in a transaction (JMS 3.1, 12.3): the session is part of the container's
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            session.createProducer(session.createQueue(queue)).send(session.createTextMessage(body));
        }
        if (rollback) {
            ejb.setRollbackOnly();
        }
    }
}
