package dev.millrace.bench.jms;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

import org.apache.activemq.artemis.core.config.Configuration;
import org.apache.activemq.artemis.core.config.impl.ConfigurationImpl;
import org.apache.activemq.artemis.core.server.embedded.EmbeddedActiveMQ;

/**
 * Apache ActiveMQ Artemis, embedded in a JVM of its own, as the peer of the JMS comparison: one acceptor on
 * {@code 127.0.0.1:<port>}, persistence on with the journal's defaults (type, buffer timeout, sync on every durable
 * send), bindings, journal, paging and large messages under {@code <dir>}, security off, audit logging off (as in
 * the distribution's logging configuration). Queues are created on first
 * use (Artemis's default address settings). Runs until the JVM is stopped (SIGTERM stops the server).
 *
 * <pre>
 *   java -cp bench/target/millrace-bench.jar dev.millrace.bench.jms.ArtemisServer PORT DIR
 * </pre>
 */
public final class ArtemisServer {

    private ArtemisServer() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ArtemisServer PORT DIR");
            System.exit(2);
        }
        // The Artemis distribution's log4j2.properties turns its audit loggers off; embedded under slf4j-simple they
        // would log every message sent and acknowledged (hundreds of MB per run). Before the first logger exists:
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.activemq.audit", "off");
        int port = Integer.parseInt(args[0]);
        Path dir = Path.of(args[1]);
        Configuration config = new ConfigurationImpl()
                .setName("artemis-peer")
                .setPersistenceEnabled(true)
                .setSecurityEnabled(false)
                .setJMXManagementEnabled(false)
                .setBindingsDirectory(dir.resolve("bindings").toString())
                .setJournalDirectory(dir.resolve("journal").toString())
                .setPagingDirectory(dir.resolve("paging").toString())
                .setLargeMessagesDirectory(dir.resolve("large-messages").toString())
                .addAcceptorConfiguration("core", "tcp://127.0.0.1:" + port + "?protocols=CORE");
        EmbeddedActiveMQ server = new EmbeddedActiveMQ().setConfiguration(config);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.stop();
            } catch (Exception e) {
                System.err.println("Artemis did not stop cleanly: " + e);
            }
            stopped.countDown();
        }, "artemis-stop"));
        server.start();
        System.out.println("Artemis started on 127.0.0.1:" + port + ", journal type "
                + server.getActiveMQServer().getConfiguration().getJournalType() + ", data in " + dir);
        stopped.await();
    }
}
