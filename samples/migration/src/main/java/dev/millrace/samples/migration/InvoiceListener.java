package dev.millrace.samples.migration;

import org.springframework.jms.annotation.JmsListener;
import org.springframework.stereotype.Component;

/**
 * Books every invoice from queue {@code invoices}. The container (Boot's, from {@code spring.jms.listener.*}) receives
 * in a transacted session. Threading: runs on the container's consumer threads.
 */
@Component
class InvoiceListener {

    static final String INVOICES = "invoices";

    private final InvoiceLedger ledger;

    InvoiceListener(InvoiceLedger ledger) {
        this.ledger = ledger;
    }

    @JmsListener(destination = INVOICES)
    void onInvoice(String invoice) {
        ledger.book(invoice);
    }
}
