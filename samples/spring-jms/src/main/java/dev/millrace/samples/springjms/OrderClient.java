package dev.millrace.samples.springjms;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.jms.core.JmsTemplate;
import org.springframework.stereotype.Component;

/**
 * Sends orders with {@link JmsTemplate} and receives their confirmations. Not thread-safe (it changes the template's
 * receive timeout): one caller at a time.
 */
@Component
class OrderClient {

    private final JmsTemplate jms;

    OrderClient(JmsTemplate jms) {
        this.jms = jms;
    }

    /** {@code order-1 .. order-n}, the third one marked {@code fail-once}. */
    static List<String> orders(int count) {
        List<String> orders = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            orders.add(i == 3 ? "order-" + i + "-fail-once" : "order-" + i);
        }
        return orders;
    }

    /**
     * Sends every order to {@code orders}, then receives confirmations until there is one per order or none came
     * within {@code timeout}. Returns the confirmations in arrival order.
     */
    List<String> placeAndAwaitConfirmations(List<String> orders, Duration timeout) {
        for (String order : orders) {
            jms.convertAndSend(OrderListener.ORDERS, order);
        }
        jms.setReceiveTimeout(timeout.toMillis());
        List<String> confirmations = new ArrayList<>();
        while (confirmations.size() < orders.size()) {
            Object confirmation = jms.receiveAndConvert(OrderListener.CONFIRMATIONS);
            if (confirmation == null) {
                break;
            }
            confirmations.add((String) confirmation);
        }
        return confirmations;
    }
}
