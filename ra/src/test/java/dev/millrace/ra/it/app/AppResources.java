package dev.millrace.ra.it.app;

/**
 * The names under which the test applications find their resources ({@code java:comp/env}): container-neutral
 * references that each container suite's {@code web.xml} maps to the resource the server binds
 * ({@code <resource-ref>} with {@code <lookup-name>}), so the same classes run in WildFly and GlassFish.
 */
public final class AppResources {

    /** The resource adapter's pooled connection factory. */
    public static final String CONNECTION_FACTORY = "jms/MillraceConnectionFactory";

    /** The XA data source {@link DatabaseMdb} writes to. */
    public static final String DATA_SOURCE = "jdbc/MillraceItXA";

    private AppResources() {
    }
}
