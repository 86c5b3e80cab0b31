package dev.millrace.samples.mdb.bad;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/** Names a queue that no administered object binds: its deployment must fail naming destinationLookup. */
@MessageDriven(name = "UnknownQueueMdb", activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationLookup",
                propertyValue = "java:/jms/millrace/queue/nowhere"),
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue")})
public class UnknownQueueMdb implements MessageListener {

    @Override
    public void onMessage(Message message) {
        throw new IllegalStateException("never activated");
    }
}
