package dev.millrace.broker.controller;

import com.alipay.sofa.jraft.util.SPI;
import com.alipay.sofa.jraft.util.timer.DefaultRaftTimerFactory;
import com.alipay.sofa.jraft.util.timer.Timer;

/**
 * SOFAJRaft's timers (election, vote, step-down, snapshot, read-index timeouts) on Millrace's timing wheel
 * ({@link WheelRaftTimer}) instead of SOFAJRaft's {@code HashedWheelTimer}, whose thread wakes every millisecond
 * whether or not anything is due: a broker's four Raft node timers and the read-index timeout scanner woke 5,000 times
 * a second in all, about 1.2% of a core each in a CPU profile of a benchmarked broker. The wheel's thread sleeps until
 * its earliest timer is due.
 *
 * <p>Found by SOFAJRaft's service loader ({@code META-INF/services/com.alipay.sofa.jraft.util.timer.RaftTimerFactory}),
 * which takes the implementation of highest {@link SPI#priority()}: SOFAJRaft's own has the default, 0. Schedulers
 * and shared timers are SOFAJRaft's (a Millrace node uses none shared).
 *
 * <p>Stateless and thread-safe.
 */
@SPI(name = "millrace-wheel", priority = 100)
public final class WheelRaftTimerFactory extends DefaultRaftTimerFactory {

    /** A timer of its own, with a thread named {@code name} that runs its tasks. */
    @Override
    public Timer createTimer(String name) {
        return new WheelRaftTimer(name);
    }
}
