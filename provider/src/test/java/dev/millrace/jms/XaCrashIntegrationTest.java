package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.XAConnection;

/**
 * XA applications killed with SIGKILL after prepare ({@link XaChildClient} in a JVM of its own): the branches stay
 * prepared and invisible, a recovering XAResource in another JVM lists them, and its commit makes the message of
 * one visible exactly once while its rollback makes the other's never appear.
 */
@Timeout(120)
class XaCrashIntegrationTest {

    @TempDir
    static Path dataDir;
    static TestBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBroker.start(dataDir);
    }

    @AfterAll
    static void stopBroker() throws Exception {
        broker.close();
    }

    /** Runs {@link XaChildClient} with {@code args} until it prints "ready", then kills it with SIGKILL. */
    private static List<String> runAndKill(String... args) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx128m",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
                XaChildClient.class.getName()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            List<String> lines = new ArrayList<>();
            String line;
            while ((line = out.readLine()) != null && !line.equals("ready")) {
                lines.add(line);
            }
            if (line == null) {
                throw new IllegalStateException("the child exited before it was ready; it printed " + lines);
            }
            return lines;
        } finally {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldCommitOrRollBackTheBranchesOfAKilledApplicationFromAnotherJvm() throws Exception {
        assertThat(runAndKill("prepare", broker.bootstrap(), "xa.crash", "crash-commit")).containsExactly("prepared");
        assertThat(runAndKill("prepare", broker.bootstrap(), "xa.crash", "crash-rollback"))
                .containsExactly("prepared");

        MillraceXAConnectionFactory factory = new MillraceXAConnectionFactory(broker.bootstrap());
        try (XAConnection xc = factory.createXAConnection(); Connection c = broker.factory().createConnection()) {
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = plain.createQueue("xa.crash");
            MessageConsumer reader = plain.createConsumer(q);
            c.start();
            assertThat(reader.receive(1500)).as("invisible while in doubt").isNull();

            XAResource r = xc.createXASession().getXAResource();
            Xid[] listed = r.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN);
            Xid toCommit = find(listed, "crash-commit");
            Xid toRollBack = find(listed, "crash-rollback");
            r.commit(toCommit, false);
            r.rollback(toRollBack);

            assertThat(((TextMessage) reader.receive(10_000)).getText()).isEqualTo("crash-commit");
            assertThat(reader.receive(1500)).as("exactly once, and nothing of the rolled-back branch").isNull();
            assertThat(r.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN)).as("nothing left in doubt")
                    .isEmpty();
        }
    }

    private static Xid find(Xid[] listed, String gtrid) {
        return Arrays.stream(listed).filter(x -> new String(x.getGlobalTransactionId(), StandardCharsets.US_ASCII)
                .equals(gtrid)).findFirst().orElseThrow(() -> new AssertionError(gtrid + " is not in the recover "
                + "list " + Arrays.toString(listed)));
    }
}
