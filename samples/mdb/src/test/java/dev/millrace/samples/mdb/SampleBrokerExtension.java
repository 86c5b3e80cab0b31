package dev.millrace.samples.mdb;

import java.nio.file.Files;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import dev.millrace.samples.testbroker.SampleBroker;

/**
 * Starts the samples' test broker ({@link SampleBroker}) once for the test run, before Arquillian starts the server
 * (register it first): its address goes into the system property {@value #BROKERS_PROPERTY}, which
 * {@code arquillian.xml} hands to the server as {@code -Dmillrace.brokers}. JUnit closes it when the run ends.
 */
public final class SampleBrokerExtension implements BeforeAllCallback {

    public static final String BROKERS_PROPERTY = "millrace.sample.brokers";

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL).getOrComputeIfAbsent(SampleBroker.class, k -> {
            try {
                SampleBroker broker = SampleBroker.start(Files.createTempDirectory("millrace-sample-mdb"));
                System.setProperty(BROKERS_PROPERTY, broker.bootstrap());
                return broker;
            } catch (Exception e) {
                throw new IllegalStateException("cannot start the test broker: " + e, e);
            }
        }, SampleBroker.class);
    }

    /** The broker's address, for the test's own clients. */
    public static String bootstrap() {
        return System.getProperty(BROKERS_PROPERTY);
    }
}
