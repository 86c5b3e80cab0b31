package dev.millrace.jms;

/** Builds {@link ConnectionSettings} (whose constructor is package-private) for tests of other packages. */
public final class TestSettings {

    private TestSettings() {
    }

    /** The settings a connection of {@code factory} would get. */
    public static ConnectionSettings of(MillraceConnectionFactory factory) {
        return new ConnectionSettings(factory, null, null);
    }
}
