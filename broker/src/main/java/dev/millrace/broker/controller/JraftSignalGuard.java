package dev.millrace.broker.controller;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Keeps HotSpot's thread-suspend signal out of SOFAJRaft's hands.
 *
 * <p>Initialising SOFAJRaft's {@code NodeImpl} installs a Java handler for SIGUSR2 (SOFAJRaft dumps node metrics
 * to files on {@code kill -USR2}), and nothing in SOFAJRaft turns that off. On Linux, SIGUSR2 is also the signal
 * HotSpot suspends threads with (its "SR" signal, {@code _JAVA_SR_SIGNUM}), and the JVM lets a Java handler replace
 * it. With SOFAJRaft's handler installed, every thread suspension is answered by a Java handler that writes
 * {@code node_describe.log}, {@code node_metrics.log} and {@code thread_pool_metrics.log} into the working directory
 * instead of suspending the thread. JFR's execution sampler suspends threads this way, so it recorded almost
 * nothing: 24 samples in 169 s of a busy broker, against 219 with the SR signal moved elsewhere (bench/RESULTS.md,
 * issue 26).
 *
 * <p>{@link #install()} runs before the first raft node starts. It takes SIGUSR2's handler (the JVM's native one),
 * initialises {@code NodeImpl} (SOFAJRaft installs its handler), then puts the JVM's handler back. SOFAJRaft's
 * signal dumps are therefore not available in Millrace, which does not use them. Between the first and the last
 * step a SIGUSR2 reaches a Java handler that does nothing, as it did SOFAJRaft's before. If {@code NodeImpl} was
 * already initialised, or the platform has no SIGUSR2, the handler is left as it is and a line is logged.
 *
 * <p>Thread-safe; does its work once per JVM.
 */
final class JraftSignalGuard {

    private static final Logger LOG = LoggerFactory.getLogger(JraftSignalGuard.class);
    private static final String NODE_IMPL = "com.alipay.sofa.jraft.core.NodeImpl";

    private static boolean done;

    private JraftSignalGuard() {
    }

    /** Initialises SOFAJRaft's {@code NodeImpl} with SIGUSR2 kept for the JVM. */
    static synchronized void install() {
        if (done) {
            return;
        }
        done = true;
        Signal usr2;
        SignalHandler jvm;
        try {
            usr2 = new Signal("USR2");
            jvm = Signal.handle(usr2, signal -> { });
        } catch (IllegalArgumentException unavailable) {
            LOG.debug("SIGUSR2 not available here ({}): SOFAJRaft installs no handler", unavailable.getMessage());
            initialiseNodeImpl();
            return;
        }
        try {
            initialiseNodeImpl();
        } finally {
            Signal.handle(usr2, jvm);
        }
        if (jvm.getClass().getName().startsWith("com.alipay.")) {
            LOG.warn("SOFAJRaft's NodeImpl was initialised before the SIGUSR2 guard: its handler stays, and thread"
                    + " suspension (JFR's execution sampler) does not work in this JVM");
        }
    }

    private static void initialiseNodeImpl() {
        try {
            Class.forName(NODE_IMPL, true, JraftSignalGuard.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("SOFAJRaft is not on the class path: " + e.getMessage(), e);
        }
    }
}
