package dev.millrace.ra.it.bench;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/**
 * The Artemis side of the MDB benchmark: bound to WildFly's own messaging ({@code activemq-ra}, the server's
 * default resource adapter for MDBs in this run), container-managed transaction (Required), 15 sessions, on the
 * JMS queue {@value #QUEUE_JNDI} of the {@code messaging-activemq} subsystem. Like {@link MillraceBenchMdb}, it
 * only records the delivery.
 */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "destinationLookup", propertyValue = ArtemisBenchMdb.QUEUE_JNDI),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "15")})
@TransactionAttribute(TransactionAttributeType.REQUIRED)
public class ArtemisBenchMdb implements MessageListener {

    public static final String QUEUE_NAME = "millraceBench";
    public static final String QUEUE_JNDI = "java:/jms/queue/millraceBench";

    @Override
    public void onMessage(Message message) {
        BenchRecorder.ARTEMIS.onMessage(message);
    }
}
