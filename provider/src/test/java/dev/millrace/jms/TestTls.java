package dev.millrace.jms;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A test CA, a broker key store whose certificate it signs (for 127.0.0.1 and localhost), and a trust store with the
 * CA, made with the JDK's keytool at test time. Every store is PKCS12 with password {@link #PASSWORD}.
 */
final class TestTls {

    static final String PASSWORD = "test-pass";

    final Path truststore;
    final Path brokerKeystore;

    private TestTls(Path dir) throws IOException, InterruptedException {
        Path ca = dir.resolve("ca.p12");
        Path caCert = dir.resolve("ca.crt");
        truststore = dir.resolve("truststore.p12");
        brokerKeystore = dir.resolve("broker.p12");
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=Millrace Test CA", "-ext", "bc:c", "-validity", "2", "-keystore", ca.toString(), "-storetype",
                "PKCS12", "-storepass", PASSWORD);
        keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", ca.toString(), "-storepass", PASSWORD, "-file",
                caCert.toString());
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caCert.toString(), "-keystore",
                truststore.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD);
        keytool("-genkeypair", "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=broker",
                "-validity", "2", "-keystore", brokerKeystore.toString(), "-storetype", "PKCS12", "-storepass",
                PASSWORD);
        Path csr = dir.resolve("broker.csr");
        Path signed = dir.resolve("broker.crt");
        keytool("-certreq", "-alias", "broker", "-keystore", brokerKeystore.toString(), "-storepass", PASSWORD,
                "-file", csr.toString());
        keytool("-gencert", "-alias", "ca", "-keystore", ca.toString(), "-storepass", PASSWORD, "-infile",
                csr.toString(), "-outfile", signed.toString(), "-rfc", "-validity", "2", "-ext",
                "san=ip:127.0.0.1,dns:localhost");
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caCert.toString(), "-keystore",
                brokerKeystore.toString(), "-storepass", PASSWORD);
        keytool("-importcert", "-alias", "broker", "-file", signed.toString(), "-keystore",
                brokerKeystore.toString(), "-storepass", PASSWORD);
    }

    static TestTls create(Path dir) throws IOException, InterruptedException {
        return new TestTls(dir);
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + new String(output, StandardCharsets.UTF_8));
        }
    }
}
