package dev.millrace.chaos;

import java.util.List;

/**
 * One client workload of the chaos suite: it sends at a steady rate and consumes while brokers are killed, then is
 * drained and checked. Lifecycle: {@link #start}, {@link #stopSending}, wait for {@link #drained}, {@link #report},
 * {@link #violations}, {@link #close}.
 */
interface Flow extends AutoCloseable {

    String name();

    void start() throws Exception;

    /** Stops the senders; consumers go on until everything acknowledged arrived. */
    void stopSending() throws Exception;

    /** Whether every acknowledged message has been consumed (and, where it applies, made final). */
    boolean drained();

    /** How many sends were acknowledged so far (the throughput of the flow). */
    long acknowledged();

    /** One line of figures. */
    String report();

    /** What broke a promise; empty when the flow kept them all. */
    List<String> violations();

    @Override
    void close() throws Exception;
}
