package dev.millrace.ra.it.bench;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/**
 * The Millrace side of the MDB benchmark: bound to the Millrace resource adapter by {@code jboss-ejb3.xml}
 * ({@link dev.millrace.ra.it.WildFlyMdbBench}), container-managed transaction (Required), 15 sessions, on the
 * Millrace queue {@value #QUEUE}. It only records the delivery; the container's transaction acknowledges it.
 */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "destination", propertyValue = MillraceBenchMdb.QUEUE),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "15")})
@TransactionAttribute(TransactionAttributeType.REQUIRED)
public class MillraceBenchMdb implements MessageListener {

    public static final String QUEUE = "bench.mdb";

    @Override
    public void onMessage(Message message) {
        BenchRecorder.MILLRACE.onMessage(message);
    }
}
