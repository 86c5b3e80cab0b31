/**
 * A hierarchical timing wheel for every delayed operation in Millrace: {@link dev.millrace.delay.Timer}
 * and its implementation {@link dev.millrace.delay.SystemTimer}, driven by a
 * {@link dev.millrace.delay.TimerReaper} thread, run {@link dev.millrace.delay.TimerTask}s after
 * their delay, with O(1) add and cancel and no ticking while idle. The package depends on nothing but
 * the JDK; time comes from an injected {@link dev.millrace.delay.Time}.
 */
package dev.millrace.delay;
