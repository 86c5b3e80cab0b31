package dev.millrace.samples.springjms;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.jms.annotation.JmsListener;
import org.springframework.messaging.handler.annotation.SendTo;
import org.springframework.stereotype.Component;

import jakarta.jms.JMSException;
import jakarta.jms.TextMessage;

/**
 * Confirms each order from queue {@code orders} with a reply on queue {@code order-confirmations}, sent in the
 * listener's transacted session. An order whose text contains {@code fail-once} throws on its first delivery: the
 * container rolls the session back, the broker delivers the order again ({@code JMSXDeliveryCount} 2) and only that
 * second attempt's confirmation is committed, so every order is confirmed exactly once.
 *
 * <p>Threading: {@link #onOrder} runs on the container's consumer threads (2 to 4), concurrently.
 */
@Component
class OrderListener {

    static final String ORDERS = "orders";
    static final String CONFIRMATIONS = "order-confirmations";

    private final Set<String> consumerThreads = ConcurrentHashMap.newKeySet();

    @JmsListener(id = "orders", destination = ORDERS)
    @SendTo(CONFIRMATIONS)
    String onOrder(TextMessage order) throws JMSException {
        consumerThreads.add(Thread.currentThread().getName());
        String text = order.getText();
        int delivery = order.getIntProperty("JMSXDeliveryCount");
        if (text.contains("fail-once") && delivery == 1) {
            throw new IllegalStateException("simulated failure of " + text + ": rolled back, delivered again");
        }
        return "confirmed " + text + " (delivery " + delivery + ")";
    }

    /** Names of the container threads that have run the listener so far. */
    Set<String> consumerThreads() {
        return Set.copyOf(consumerThreads);
    }
}
