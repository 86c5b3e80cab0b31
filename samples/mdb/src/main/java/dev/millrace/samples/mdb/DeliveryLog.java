package dev.millrace.samples.mdb;

import java.util.ArrayList;
import java.util.List;

import jakarta.ejb.ConcurrencyManagement;
import jakarta.ejb.ConcurrencyManagementType;
import jakarta.ejb.Singleton;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;

/**
 * Every delivery {@link OrderProcessor} got, as {@code <body>:<JMSXDeliveryCount>:<JMSRedelivered>}, in arrival
 * order (kept outside the deliveries' transactions, so rolled-back deliveries stay recorded). In memory, for
 * {@link OrdersResource}; thread-safe.
 */
@Singleton
@ConcurrencyManagement(ConcurrencyManagementType.BEAN)
@TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
public class DeliveryLog {

    private final List<String> deliveries = new ArrayList<>();

    public void record(String body, int deliveryCount, boolean redelivered) {
        synchronized (deliveries) {
            deliveries.add(body + ":" + deliveryCount + ":" + redelivered);
        }
    }

    public List<String> deliveries() {
        synchronized (deliveries) {
            return List.copyOf(deliveries);
        }
    }
}
