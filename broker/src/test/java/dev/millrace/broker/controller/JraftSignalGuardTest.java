package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import sun.misc.Signal;
import sun.misc.SignalHandler;

/** SOFAJRaft initialised through the guard leaves SIGUSR2 (HotSpot's thread-suspend signal) to the JVM. */
@Timeout(30)
class JraftSignalGuardTest {

    @Test
    void shouldLeaveUsr2ToTheJvmOnceNodeImplIsInitialised() throws Exception {
        JraftSignalGuard.install();
        Class.forName("com.alipay.sofa.jraft.core.NodeImpl", true, getClass().getClassLoader());

        Signal usr2 = new Signal("USR2");
        SignalHandler current = Signal.handle(usr2, signal -> { });
        Signal.handle(usr2, current); // put back what was there
        assertThat(current.getClass().getName()).as("SIGUSR2's handler after SOFAJRaft's NodeImpl is initialised")
                .doesNotStartWith("com.alipay.");
    }
}
