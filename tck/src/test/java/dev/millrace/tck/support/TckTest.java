package dev.millrace.tck.support;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a conformance test class: the suite's broker is running before its first test (one broker for the whole run,
 * see {@link TckExtension}), and its test methods may take a {@link Jms} parameter.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(TckExtension.class)
public @interface TckTest {
}
