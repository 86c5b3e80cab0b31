package dev.millrace.broker.config;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** Names a {@link BrokerConfig} field as it appears in the configuration file, with its documentation. */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface Setting {
    String name();

    String doc();

    /** A password or key: DescribeConfigs and the settings listing show no value for it. */
    boolean sensitive() default false;
}
