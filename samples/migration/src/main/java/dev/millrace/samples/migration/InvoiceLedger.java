package dev.millrace.samples.migration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.springframework.stereotype.Component;

/** The invoices booked so far, in booking order. Thread-safe: listener threads book, any thread waits. */
@Component
class InvoiceLedger {

    private final Set<String> booked = new LinkedHashSet<>();

    synchronized void book(String invoice) {
        booked.add(invoice);
        notifyAll();
    }

    /** Waits until every one of {@code invoices} is booked or {@code timeout} passed; returns those booked. */
    synchronized List<String> awaitBooked(List<String> invoices, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!booked.containsAll(invoices)) {
            long leftMs = (deadline - System.nanoTime()) / 1_000_000;
            if (leftMs <= 0) {
                break;
            }
            wait(leftMs);
        }
        List<String> result = new ArrayList<>(booked);
        result.retainAll(invoices);
        return result;
    }
}
