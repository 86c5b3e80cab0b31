package dev.millrace.broker.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Keys and certificates made at test time with the JDK's keytool (and openssl for the PEM form): a test CA, a broker
 * certificate for 127.0.0.1/localhost signed by it, client certificates signed by it, and a second CA nobody
 * trusts. Every store is PKCS12 with password {@link #PASSWORD}.
 */
public final class TestCerts {

    public static final String PASSWORD = "test-pass";

    public final Path dir;
    /** Trusts the test CA only. */
    public final Path truststore;
    /** The broker's key and its chain (CN=broker, SAN ip:127.0.0.1, dns:localhost). */
    public final Path brokerKeystore;
    /** The test CA's key pair, for signing more certificates. */
    private final Path caKeystore;
    private final Path caCert;

    /**
     * The first set this JVM made, under a directory of its own: later sets are copies of its files, because every
     * keytool run starts a JVM (eight for a set, seconds on a busy 2-core machine). Tests only read the stores.
     */
    private static TestCerts template;

    private TestCerts(Path dir) {
        this.dir = dir;
        this.caKeystore = dir.resolve("ca.p12");
        this.caCert = dir.resolve("ca.crt");
        this.truststore = dir.resolve("truststore.p12");
        this.brokerKeystore = dir.resolve("broker.p12");
    }

    private void make() throws IOException, InterruptedException {
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=Millrace Test CA", "-ext", "bc:c", "-validity", "2", "-keystore", caKeystore.toString(),
                "-storetype", "PKCS12", "-storepass", PASSWORD);
        keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", caKeystore.toString(), "-storepass", PASSWORD,
                "-file", caCert.toString());
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caCert.toString(), "-keystore",
                truststore.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD);
        signedKeystore(brokerKeystore, "CN=broker", caKeystore, caCert, "san=ip:127.0.0.1,dns:localhost");
    }

    /**
     * The test CA and the broker's keys under {@code dir}: made by keytool the first time in this JVM, copied from
     * that first set afterwards (the same CA and keys for every test of a JVM).
     */
    public static synchronized TestCerts create(Path dir) throws IOException, InterruptedException {
        if (template == null) {
            Path own = Files.createTempDirectory("millrace-test-certs");
            own.toFile().deleteOnExit();
            TestCerts made = new TestCerts(own);
            made.make();
            try (java.util.stream.Stream<Path> files = Files.list(own)) {
                files.forEach(f -> f.toFile().deleteOnExit()); // before the directory (deleted in reverse order)
            }
            template = made;
        }
        TestCerts copy = new TestCerts(dir);
        Files.createDirectories(dir);
        Files.copy(template.caKeystore, copy.caKeystore);
        Files.copy(template.caCert, copy.caCert);
        Files.copy(template.truststore, copy.truststore);
        Files.copy(template.brokerKeystore, copy.brokerKeystore);
        return copy;
    }

    /** A key store with a key for {@code dname}, signed by the test CA. */
    public Path clientKeystore(String name, String dname) throws IOException, InterruptedException {
        Path store = dir.resolve(name + ".p12");
        signedKeystore(store, dname, caKeystore, caCert, null);
        return store;
    }

    /** A key store with a key for {@code dname}, signed by a CA that nobody trusts. */
    public Path untrustedKeystore(String name, String dname) throws IOException, InterruptedException {
        Path otherCa = dir.resolve(name + "-ca.p12");
        Path otherCaCert = dir.resolve(name + "-ca.crt");
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=Untrusted CA", "-ext", "bc:c", "-validity", "2", "-keystore", otherCa.toString(),
                "-storetype", "PKCS12", "-storepass", PASSWORD);
        keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", otherCa.toString(), "-storepass", PASSWORD,
                "-file", otherCaCert.toString());
        Path store = dir.resolve(name + ".p12");
        signedKeystore(store, dname, otherCa, otherCaCert, "san=ip:127.0.0.1,dns:localhost");
        return store;
    }

    /** The broker's key and certificate chain as one unencrypted PEM file (PKCS#8 key, then the certificates). */
    public Path brokerPem() throws IOException, InterruptedException {
        Path key = dir.resolve("broker-key.pem");
        Path certs = dir.resolve("broker-certs.pem");
        run(List.of("openssl", "pkcs12", "-in", brokerKeystore.toString(), "-passin", "pass:" + PASSWORD,
                "-nocerts", "-nodes", "-out", dir.resolve("broker-key-raw.pem").toString()));
        run(List.of("openssl", "pkcs8", "-topk8", "-nocrypt", "-in", dir.resolve("broker-key-raw.pem").toString(),
                "-out", key.toString()));
        keytool("-exportcert", "-rfc", "-alias", "key", "-keystore", brokerKeystore.toString(), "-storepass",
                PASSWORD, "-file", certs.toString());
        Path pem = dir.resolve("broker.pem");
        // the key, then the chain from the broker's own certificate up to the CA's
        Files.writeString(pem, Files.readString(key) + Files.readString(certs) + Files.readString(caCert));
        return pem;
    }

    private void signedKeystore(Path store, String dname, Path ca, Path caCertFile, String san)
            throws IOException, InterruptedException {
        String alias = "key";
        keytool("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", dname,
                "-validity", "2", "-keystore", store.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD);
        Path csr = dir.resolve(store.getFileName() + ".csr");
        Path signed = dir.resolve(store.getFileName() + ".crt");
        keytool("-certreq", "-alias", alias, "-keystore", store.toString(), "-storepass", PASSWORD, "-file",
                csr.toString());
        List<String> gencert = new ArrayList<>(List.of("-gencert", "-alias", "ca", "-keystore", ca.toString(),
                "-storepass", PASSWORD, "-infile", csr.toString(), "-outfile", signed.toString(), "-rfc",
                "-validity", "2"));
        if (san != null) {
            gencert.add("-ext");
            gencert.add(san);
        }
        keytool(gencert.toArray(String[]::new));
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caCertFile.toString(), "-keystore",
                store.toString(), "-storepass", PASSWORD);
        keytool("-importcert", "-alias", alias, "-file", signed.toString(), "-keystore", store.toString(),
                "-storepass", PASSWORD);
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        run(command);
    }

    private static void run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + new String(output, StandardCharsets.UTF_8));
        }
    }
}
