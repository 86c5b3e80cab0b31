package dev.millrace.ra.it.recovery.app;

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
 * Consumes {@code it.recovery} and writes one row for each delivery into the server's XA data source
 * {@link RecoveryTable#DATA_SOURCE}, in one container transaction with the message's receipt (two XA branches: the
 * Millrace inbound one, enlisted by the adapter's {@code beforeDelivery}, and the database's). A row is
 * {@code body:JMSRedelivered:JMSXDeliveryCount}, so a delivery that was rolled back and made again shows.
 */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "destination", propertyValue = "it.recovery"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "1")})
public class RecoveryMdb implements MessageListener {

    @Resource(name = RecoveryTable.DATA_SOURCE)
    private DataSource dataSource;

    @Override
    public void onMessage(Message message) {
        try (Connection c = dataSource.getConnection();
                PreparedStatement insert = c.prepareStatement("INSERT INTO recovery_rows(delivery) VALUES (?)")) {
            insert.setString(1, message.getBody(String.class) + ":" + message.getJMSRedelivered() + ":"
                    + message.getIntProperty("JMSXDeliveryCount"));
            insert.executeUpdate();
        } catch (JMSException | SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
