package dev.millrace.ra.it.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
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
 * Recovery in a real application server: the server is killed with SIGKILL between the two phases of an MDB's XA
 * transaction (a message received from Millrace and a row written to a database in a file, through the server's XA
 * data source; {@link RecoveryMdb}), restarted, and its transaction manager finishes the transaction through the
 * resource adapter's XAResources: the row is written once, the message is not delivered again, and nothing stays
 * prepared on the broker.
 *
 * <p>Each suite gives a server process of the test's own ({@link ServerProcess}: Arquillian's managed containers
 * cannot be killed and restarted) on ports apart from the Arquillian suites', with the .rar and the application
 * {@link #application} deployed. The server reaches a broker of the test's own through a {@link CompletionGate},
 * which, once armed, holds back the first commit request: by then the transaction manager has prepared both
 * branches and logged its decision to commit, and nothing is committed on the broker.
 */
@Timeout(value = 420, unit = TimeUnit.SECONDS)
abstract class RecoveryScenario {

    static final String WAR = "millrace-recovery";
    static final Duration BOOT = Duration.ofSeconds(180);
    static final Duration WAIT = Duration.ofSeconds(120);
    private static final String QUEUE = "it.recovery";

    /** Kept when the test fails: the server's logs, configuration and transaction log are in it. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;

    /**
     * A running server in {@code dir} with the .rar and {@link #application} deployed, whose adapter and connection
     * factories reach the brokers at 127.0.0.1:{@code gatePort}.
     */
    protected abstract ServerProcess startWithApplication(Path dir, int gatePort) throws Exception;

    /** Where the server serves {@link RowsServlet}. */
    protected abstract URI rowsUrl();

    /** The .rar Maven built. */
    static Path builtRar() {
        return new File(System.getProperty("millrace.rar")).toPath();
    }

    /** The test application; its {@code web.xml} maps {@link RecoveryTable#DATA_SOURCE} to {@code dataSource}. */
    static WebArchive application(String dataSource) {
        return ShrinkWrap.create(WebArchive.class, WAR + ".war")
                .addClasses(RecoveryMdb.class, RecoveryTable.class, RowsServlet.class)
                .setWebXML(new StringAsset("""
                        <?xml version="1.0" encoding="UTF-8"?>
                        <web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
                            <resource-ref>
                                <res-ref-name>%s</res-ref-name>
                                <res-type>javax.sql.DataSource</res-type>
                                <lookup-name>%s</lookup-name>
                            </resource-ref>
                        </web-app>
                        """.formatted(RecoveryTable.DATA_SOURCE, dataSource)));
    }

    @Test
    void shouldFinishTransactionWhenServerIsKilledBetweenPrepareAndCommit() throws Exception {
        int gatePort = RunningBroker.freePort();
        try (RunningBroker broker = RunningBroker.start(gatePort);
                CompletionGate gate = CompletionGate.open(gatePort, broker.port());
                ServerProcess server = startWithApplication(dir, gatePort)) {
            String bootstrap = "127.0.0.1:" + broker.port();
            server.awaitOk(rowsUrl(), BOOT);

            send(bootstrap, "first");
            assertThat(awaitRows(server, 1)).as("the MDB commits through the gate").containsExactly("first:false:1");

            gate.arm();
            send(bootstrap, "in-doubt");
            String held = gate.awaitHeld(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(held).as("a commit request held back at the gate, log:\n%s", server.logTail()).isNotNull();
            server.kill();
            gate.disarm();
            List<Xid> inDoubt = prepared(bootstrap);
            System.out.println("killed the server holding " + held + "; prepared on the broker: " + inDoubt.stream()
                    .map(x -> "format " + x.getFormatId() + ", gtrid " + x.getGlobalTransactionId().length
                            + " bytes").toList());
            assertThat(inDoubt).as("the branch prepared on the broker when the server died (held: %s)", held)
                    .hasSize(1);

            server.start();
            server.awaitOk(rowsUrl(), BOOT);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!prepared(bootstrap).isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(250); // polling the broker while the server's recovery runs
            }
            assertThat(prepared(bootstrap)).as("in doubt after the restart, log:\n%s", server.logTail()).isEmpty();
            assertThat(awaitRows(server, 2)).as("the row of the in-doubt delivery written once, by recovery")
                    .containsExactly("first:false:1", "in-doubt:false:1");

            send(bootstrap, "after");
            assertThat(awaitRows(server, 3)).as("the in-doubt message was not delivered again")
                    .containsExactly("first:false:1", "in-doubt:false:1", "after:false:1");
        }
    }

    private static void send(String bootstrap, String body) {
        try (JMSContext context = new MillraceConnectionFactory(bootstrap).createContext()) {
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
    private List<String> awaitRows(ServerProcess server, int count) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        List<String> rows = List.of();
        while (rows.size() < count && System.nanoTime() < deadline) {
            String body = server.awaitOk(rowsUrl(), WAIT);
            rows = body.isEmpty() ? List.of() : body.lines().toList();
            if (rows.size() < count) {
                Thread.sleep(250); // polling the server while the MDB works
            }
        }
        return rows;
    }
}
