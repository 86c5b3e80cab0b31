package dev.millrace.broker.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code millrace server} with wrong security settings stops before it starts anything, with status 2 and a message
 * naming the setting: those the loader checks (the protocol map) and those only checked as the broker starts
 * (a key store that does not load).
 */
@Timeout(30)
class ServerSecuritySettingsTest {

    @TempDir
    Path tmp;

    @Test
    void shouldStopWithTheSettingNamedWhenTheProtocolMapNamesAnUnknownProtocol() {
        Result result = run("server", "--data-dir", tmp.resolve("data").toString(),
                "--set", "listeners=CLIENTS://127.0.0.1:0", "--set", "listener.security.protocol.map=CLIENTS:TLS");
        assertThat(result.status).isEqualTo(2);
        assertThat(result.stderr).contains("listener.security.protocol.map: unknown security protocol 'TLS'");
    }

    @Test
    void shouldStopWithTheSettingNamedWhenTheKeystoreDoesNotLoad() throws Exception {
        Path garbage = Files.writeString(tmp.resolve("broker.p12"), "not a key store");
        Result result = run("server", "--data-dir", tmp.resolve("data").toString(),
                "--set", "listeners=SSL://127.0.0.1:0", "--set", "ssl.keystore.location=" + garbage,
                "--set", "ssl.keystore.password=secret");
        assertThat(result.status).isEqualTo(2);
        assertThat(result.stderr).contains("ssl.keystore.location").contains(garbage.toString());
        assertThat(tmp.resolve("data")).doesNotExist();
    }

    private record Result(int status, String stderr) {
    }

    private static Result run(String... args) {
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            int status = new CommandLine(new Millrace()).execute(args);
            return new Result(status, captured.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(original);
        }
    }
}
