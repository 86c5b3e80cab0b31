package dev.millrace.delay;

/** {@link Time#SYSTEM}: the JVM's clocks. Stateless and thread-safe. */
final class SystemTime implements Time {

    @Override
    public long milliseconds() {
        return System.currentTimeMillis();
    }

    @Override
    public long nanoseconds() {
        return System.nanoTime();
    }

    @Override
    public String toString() {
        return "Time.SYSTEM";
    }
}
