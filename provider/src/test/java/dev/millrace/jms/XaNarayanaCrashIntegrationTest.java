package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * An application using Narayana is killed with SIGKILL after the transaction manager logged its commit decision and
 * before Millrace's branch was committed ({@link XaNarayanaChild}); at its next start Narayana's recovery, with
 * Millrace enlisted through its JmsXAResourceRecoveryHelper, commits the branch: the message appears exactly once.
 */
@Timeout(180)
class XaNarayanaCrashIntegrationTest {

    @TempDir
    Path dataDir;
    @TempDir
    Path store;

    /** Runs {@link XaNarayanaChild} with {@code args} until it prints "ready"; kills it with SIGKILL then. */
    private static List<String> runUntilReady(String... args) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx192m",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
                XaNarayanaChild.class.getName()));
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
    void shouldCommitTheBranchOfAKilledApplicationWhenItsTransactionManagerRecovers() throws Exception {
        try (TestBroker broker = TestBroker.start(dataDir);
             Connection c = broker.factory().createConnection()) {
            assertThat(runUntilReady("commit", broker.bootstrap(), "xa.narayana.crash", store.toString(), "logged"))
                    .contains("committing");
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = plain.createQueue("xa.narayana.crash");
            MessageConsumer reader = plain.createConsumer(q);
            c.start();
            assertThat(reader.receive(1500)).as("prepared, not committed, when the application died").isNull();

            runUntilReady("recover", broker.bootstrap(), store.toString());

            assertThat(((TextMessage) reader.receive(10_000)).getText()).isEqualTo("logged");
            assertThat(reader.receive(1500)).as("exactly once").isNull();
        }
    }
}
