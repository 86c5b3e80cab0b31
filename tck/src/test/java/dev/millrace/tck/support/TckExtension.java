package dev.millrace.tck.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Hashtable;
import java.util.Properties;
import java.util.stream.Stream;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Starts ONE broker for the whole run (kept in the root context's store, so it is closed, and its data directory
 * deleted, when the run ends) and hands each test method that asks for it a fresh {@link Jms} fixture, closed after
 * the test with everything it created.
 *
 * <p>The broker is {@code System.getProperty("tck.target", "millrace")}: Millrace or ActiveMQ Artemis. The JNDI
 * environment is the broker's properties resource ({@code jndi.properties} or {@code jndi-artemis.properties}) with
 * {@code ${tck.broker}} replaced by the started broker's address.
 *
 * <p>Thread-safe as JUnit requires: the root store creates the broker once even when called concurrently.
 */
public final class TckExtension implements BeforeAllCallback, ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(TckExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        environment(context);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == Jms.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Jms jms = new Jms(environment(context), context.getDisplayName());
        // closed with the test method's context, after the test and its @AfterEach methods
        context.getStore(NAMESPACE).put(Jms.class, jms);
        return jms;
    }

    private static Hashtable<String, String> environment(ExtensionContext context) {
        RunningBroker running = context.getRoot().getStore(NAMESPACE)
                .computeIfAbsent(RunningBroker.class, key -> RunningBroker.start(), RunningBroker.class);
        return running.environment;
    }

    /** The run's broker, its data directory and its JNDI environment; closed by JUnit at the end of the run. */
    private static final class RunningBroker implements AutoCloseable {
        private final TckBroker broker;
        private final Path dir;
        private final Hashtable<String, String> environment;

        private RunningBroker(TckBroker broker, Path dir, Hashtable<String, String> environment) {
            this.broker = broker;
            this.dir = dir;
            this.environment = environment;
        }

        static RunningBroker start() {
            String target = System.getProperty("tck.target", "millrace");
            try {
                Path dir = Files.createTempDirectory("millrace-tck-" + target);
                TckBroker broker = TckBroker.start(target, dir);
                return new RunningBroker(broker, dir, jndiEnvironment(broker));
            } catch (Exception e) {
                throw new IllegalStateException("could not start the tck's broker (tck.target=" + target + "): " + e, e);
            }
        }

        private static Hashtable<String, String> jndiEnvironment(TckBroker broker) throws IOException {
            Properties properties = new Properties();
            try (InputStream in = TckExtension.class.getClassLoader().getResourceAsStream(broker.jndiResource())) {
                if (in == null) {
                    throw new IOException("JNDI resource " + broker.jndiResource() + " is not on the class path");
                }
                properties.load(in);
            }
            Hashtable<String, String> env = new Hashtable<>();
            for (String name : properties.stringPropertyNames()) {
                env.put(name, properties.getProperty(name).replace("${tck.broker}", broker.address()));
            }
            return env;
        }

        @Override
        public void close() throws Exception {
            try {
                broker.close();
            } finally {
                try (Stream<Path> files = Files.walk(dir)) {
                    files.sorted(Comparator.reverseOrder()).forEach(p -> {
                        try {
                            Files.deleteIfExists(p);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
                }
            }
        }
    }
}
