package dev.millrace.samples.migration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.jms.core.JmsTemplate;
import org.springframework.stereotype.Component;

/** Sends invoices with Boot's {@link JmsTemplate}. Thread-safe. */
@Component
class InvoiceSender {

    private final JmsTemplate jms;
    private final InvoiceLedger ledger;

    InvoiceSender(JmsTemplate jms, InvoiceLedger ledger) {
        this.jms = jms;
        this.ledger = ledger;
    }

    /**
     * Sends {@code count} invoices named after this run (so that a queue that still holds an earlier run's invoices
     * does not count) and waits until the listener has booked them all or {@code timeout} passed. Returns those booked.
     */
    List<String> sendAndAwaitBooking(int count, Duration timeout) {
        String run = Long.toString(System.nanoTime(), 36);
        List<String> invoices = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            String invoice = "invoice-" + run + "-" + i;
            jms.convertAndSend(InvoiceListener.INVOICES, invoice);
            invoices.add(invoice);
        }
        try {
            return ledger.awaitBooked(invoices, timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }
}
