package dev.millrace.tck.support;

import java.nio.file.Path;

import org.apache.activemq.artemis.core.config.Configuration;
import org.apache.activemq.artemis.core.config.impl.ConfigurationImpl;
import org.apache.activemq.artemis.core.server.embedded.EmbeddedActiveMQ;

/**
 * ActiveMQ Artemis embedded in this JVM, the reference the suite is checked against ({@code -Partemis}): one CORE
 * acceptor on 127.0.0.1 (a port found free just before), persistence off, security off, addresses and queues created
 * on first use (Artemis's default address settings). Its JNDI is Artemis's own {@code ActiveMQInitialContextFactory}
 * ({@code jndi-artemis.properties}). Not thread-safe: started and closed by the suite's extension.
 */
final class ArtemisTckBroker implements TckBroker {

    private final EmbeddedActiveMQ server;
    private final int port;

    private ArtemisTckBroker(EmbeddedActiveMQ server, int port) {
        this.server = server;
        this.port = port;
    }

    static ArtemisTckBroker start(Path dir) throws Exception {
        int port = TckBroker.freePort();
        Configuration config = new ConfigurationImpl()
                .setName("tck-artemis")
                .setPersistenceEnabled(false)
                .setSecurityEnabled(false)
                .setJMXManagementEnabled(false)
                .setBindingsDirectory(dir.resolve("bindings").toString())
                .setJournalDirectory(dir.resolve("journal").toString())
                .setPagingDirectory(dir.resolve("paging").toString())
                .setLargeMessagesDirectory(dir.resolve("large-messages").toString())
                .addAcceptorConfiguration("core", "tcp://127.0.0.1:" + port + "?protocols=CORE");
        EmbeddedActiveMQ server = new EmbeddedActiveMQ().setConfiguration(config);
        server.start();
        return new ArtemisTckBroker(server, port);
    }

    @Override
    public String address() {
        return "tcp://127.0.0.1:" + port;
    }

    @Override
    public String jndiResource() {
        return "jndi-artemis.properties";
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }

    @Override
    public String toString() {
        return "ActiveMQ Artemis at " + address();
    }
}
