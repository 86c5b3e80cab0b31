package dev.millrace.ra.it.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.jms.MillraceConnectionFactory;
import dev.millrace.jms.MillraceXAConnectionFactory;
import dev.millrace.ra.it.MillraceBrokerExtension.RunningBroker;
import dev.millrace.ra.it.recovery.app.RecoveryMdb;
import dev.millrace.ra.it.recovery.app.RecoveryTable;
import dev.millrace.ra.it.recovery.app.RowsServlet;
import jakarta.jms.JMSContext;
import jakarta.jms.XAConnection;

/**
 * Recovery in a real WildFly: the server is killed with SIGKILL between the two phases of an MDB's XA transaction
 * (a message received from Millrace and a row written to an H2 database in a file, through the server's XA data
 * source), restarted, and its transaction manager finishes the transaction through the resource adapter's
 * XAResources: the message is consumed once and the row written once.
 *
 * <p>The server is a process of the test's own ({@link WildFlyProcess}; Arquillian's managed container cannot be
 * killed and restarted), with a port offset of {@value #PORT_OFFSET}, and reaches a broker of the test's own through
 * a {@link CompletionGate}, which holds back the first commit request after it is armed: by then the transaction
 * manager has prepared both branches and logged its decision to commit, and nothing is committed on the broker.
 * Narayana's periodic recovery runs every few seconds ({@code RecoveryEnvironmentBean} system properties) so the
 * test does not wait its default two minutes.
 */
@Timeout(value = 420, unit = TimeUnit.SECONDS)
class WildFlyRecoveryIT {

    static final int PORT_OFFSET = 200;
    private static final Duration BOOT = Duration.ofSeconds(180);
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final String QUEUE = "it.recovery";

    @TempDir
    Path dir;

    @Test
    void shouldFinishTransactionWhenServerIsKilledBetweenPrepareAndCommit() throws Exception {
        int gatePort = RunningBroker.freePort();
        try (RunningBroker broker = RunningBroker.start(gatePort);
                CompletionGate gate = CompletionGate.open(gatePort, broker.port());
                WildFlyProcess wildfly = WildFlyProcess.prepare(Path.of(System.getProperty("jboss.home")),
                        dir.resolve("wildfly"), config -> withDataSource(config, dir.resolve("db")), List.of(
                                "-Djboss.socket.binding.port-offset=" + PORT_OFFSET,
                                "-Dmillrace.brokers=127.0.0.1:" + gatePort,
                                "-Dejb.resource-adapter-name=millrace-ra.rar",
                                "-Dsofa.middleware.log.disable=true",
                                "-DRecoveryEnvironmentBean.periodicRecoveryPeriod=3",
                                "-DRecoveryEnvironmentBean.recoveryBackoffPeriod=1"))) {
            String bootstrap = "127.0.0.1:" + broker.port();
            deploy(wildfly.deployments());
            URI rows = URI.create("http://127.0.0.1:" + (8080 + PORT_OFFSET) + "/millrace-recovery/rows");
            wildfly.start();
            wildfly.awaitOk(rows, BOOT);

            send(bootstrap, "first");
            assertThat(awaitRows(rows, 1)).as("the MDB commits through the gate").containsExactly("first:false:1");

            gate.arm();
            send(bootstrap, "in-doubt");
            String held = gate.awaitHeld(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(held).as("a commit request held back at the gate, console:\n%s", wildfly.consoleTail())
                    .isNotNull();
            wildfly.kill();
            gate.disarm();
            List<Xid> inDoubt = prepared(bootstrap);
            System.out.println("killed WildFly holding " + held + "; prepared on the broker: " + inDoubt.stream()
                    .map(x -> "format " + x.getFormatId() + ", gtrid " + x.getGlobalTransactionId().length
                            + " bytes").toList());
            assertThat(inDoubt).as("the branch prepared on the broker when the server died (held: %s)", held)
                    .hasSize(1);

            wildfly.start();
            wildfly.awaitOk(rows, BOOT);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!prepared(bootstrap).isEmpty() && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(250); // polling the broker while the server's recovery runs
            }
            assertThat(prepared(bootstrap)).as("in doubt after the restart, console:\n%s", wildfly.consoleTail())
                    .isEmpty();
            assertThat(awaitRows(rows, 2)).as("the row of the in-doubt delivery written once, by recovery")
                    .containsExactly("first:false:1", "in-doubt:false:1");

            send(bootstrap, "after");
            assertThat(awaitRows(rows, 3)).as("the in-doubt message was not delivered again")
                    .containsExactly("first:false:1", "in-doubt:false:1", "after:false:1");
        }
    }

    /** The .rar Maven built and the application, into the scanner's directory: the server deploys them at boot. */
    private static void deploy(Path deployments) throws IOException {
        Files.copy(new File(System.getProperty("millrace.rar")).toPath(), deployments.resolve("millrace-ra.rar"));
        ShrinkWrap.create(WebArchive.class, "millrace-recovery.war")
                .addClasses(RecoveryMdb.class, RecoveryTable.class, RowsServlet.class)
                .as(ZipExporter.class).exportTo(deployments.resolve("millrace-recovery.war").toFile());
    }

    /** The server's configuration with an XA data source of WildFly's H2 driver over a database file. */
    static String withDataSource(String config, Path db) {
        String dataSource = """
                <xa-datasource jndi-name="%s" pool-name="MillraceRecoveryXA">
                    <xa-datasource-property name="URL">jdbc:h2:file:%s</xa-datasource-property>
                    <driver>h2</driver>
                    <security user-name="sa" password="sa"/>
                    <recovery>
                        <recover-credential user-name="sa" password="sa"/>
                    </recovery>
                </xa-datasource>
                <drivers>""".formatted(RecoveryTable.DATA_SOURCE, db.toAbsolutePath());
        if (!config.contains("<drivers>")) {
            throw new IllegalStateException("standalone-full.xml has no <drivers> element to put the data source by");
        }
        return config.replaceFirst("<drivers>", java.util.regex.Matcher.quoteReplacement(dataSource));
    }

    private static void send(String bootstrap, String body) {
        MillraceConnectionFactory factory = new MillraceConnectionFactory(bootstrap);
        try (JMSContext context = factory.createContext()) {
            context.createProducer().send(context.createQueue(QUEUE), body);
        }
    }

    /** The broker's prepared branches, as a transaction manager's recovery scan sees them. */
    private static List<Xid> prepared(String bootstrap) throws Exception {
        try (XAConnection connection = new MillraceXAConnectionFactory(bootstrap).createXAConnection()) {
            XAResource resource = connection.createXASession().getXAResource();
            return Arrays.asList(resource.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN));
        }
    }

    /** Polls the application until it lists at least {@code count} rows (or {@link #WAIT} passes); the rows. */
    private static List<String> awaitRows(URI url, int count) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + WAIT.toNanos();
        List<String> rows = List.of();
        while (rows.size() < count && System.nanoTime() < deadline) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(url).build(),
                    HttpResponse.BodyHandlers.ofString());
            rows = r.body().isEmpty() ? List.of() : r.body().lines().toList();
            if (rows.size() < count) {
                TimeUnit.MILLISECONDS.sleep(250); // polling the server while the MDB works
            }
        }
        return rows;
    }
}
