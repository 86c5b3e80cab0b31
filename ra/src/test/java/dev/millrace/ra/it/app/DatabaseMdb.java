package dev.millrace.ra.it.app;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

import javax.sql.DataSource;

import jakarta.annotation.Resource;
import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/**
 * Consumes {@code it.db} and writes a row of each message's body into the XA data source
 * {@link AppResources#DATA_SOURCE}, in one XA transaction with the message's receipt; a body starting with {@code fail} throws after the insert, so both roll
 * back (after maxDeliveries=2 the message is in {@code it.db.DLQ}, and no row was written).
 */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "destination", propertyValue = "it.db"),
        @ActivationConfigProperty(propertyName = "maxDeliveries", propertyValue = "2"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "1")})
public class DatabaseMdb implements MessageListener {

    @Resource(name = AppResources.DATA_SOURCE)
    private DataSource dataSource;

    @Override
    public void onMessage(Message message) {
        try (Connection c = dataSource.getConnection();
                PreparedStatement insert = c.prepareStatement("INSERT INTO it_rows(body) VALUES (?)")) {
            String body = message.getBody(String.class);
            insert.setString(1, body);
            insert.executeUpdate();
            if (body.startsWith("fail")) {
                throw new IllegalStateException("failing after the insert on purpose: " + body);
            }
        } catch (JMSException | SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
