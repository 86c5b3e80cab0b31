package dev.millrace.bench.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;

/**
 * The same {@code SASL_SSL} set-up for both brokers of {@link TlsComparison}: one self-signed key and certificate
 * (EC P-256, subject alternative names {@code ip:127.0.0.1}, {@code dns:localhost}) made by the JDK's
 * {@code keytool}, a trust store holding that certificate, TLS 1.3 only, SCRAM-SHA-512 only, and one SCRAM user
 * created through the Admin API ({@code alterUserScramCredentials}, 4,096 iterations) over the broker's
 * {@code PLAINTEXT} listener, which nothing else on these brokers protects (no authorizer on either).
 *
 * <pre>
 *  broker         PLAINTEXT://127.0.0.1:p1   perf tools' PLAINTEXT runs, Admin calls, topic creation
 *                 SASL_SSL://127.0.0.1:p2    perf tools' SASL_SSL runs (--command-config client.properties)
 *  work dir       tls/broker.p12             the broker's key store (PKCS12, password {@value #STORE_PASSWORD})
 *                 tls/truststore.p12         the clients' trust store (PKCS12, same password)
 *                 tls/client.properties      what ProducerPerformance and ConsumerPerformance get
 * </pre>
 *
 * <p>Immutable after {@link #create}; the files stay until the work directory is deleted.
 */
final class SaslSslSetup {

    static final String STORE_PASSWORD = "bench-store-pass";
    static final String USER = "bench";
    static final String USER_PASSWORD = "bench-secret";
    static final String MECHANISM = "SCRAM-SHA-512";
    static final String TLS_VERSION = "TLSv1.3";
    static final int SCRAM_ITERATIONS = 4096;

    private final Path keystore;
    private final Path truststore;
    private final Path clientProperties;

    private SaslSslSetup(Path keystore, Path truststore, Path clientProperties) {
        this.keystore = keystore;
        this.truststore = truststore;
        this.clientProperties = clientProperties;
    }

    /** Makes the key store, trust store and client properties under {@code dir/tls}. */
    static SaslSslSetup create(Path dir) throws IOException, InterruptedException {
        Path tls = Files.createDirectories(dir.resolve("tls"));
        Path keystore = tls.resolve("broker.p12");
        Path cert = tls.resolve("broker.crt");
        Path truststore = tls.resolve("truststore.p12");
        keytool("-genkeypair", "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=millrace-bench", "-ext", "san=ip:127.0.0.1,dns:localhost", "-validity", "2",
                "-keystore", keystore.toString(), "-storetype", "PKCS12", "-storepass", STORE_PASSWORD);
        keytool("-exportcert", "-rfc", "-alias", "broker", "-keystore", keystore.toString(),
                "-storepass", STORE_PASSWORD, "-file", cert.toString());
        keytool("-importcert", "-noprompt", "-alias", "broker", "-file", cert.toString(),
                "-keystore", truststore.toString(), "-storetype", "PKCS12", "-storepass", STORE_PASSWORD);
        Path client = tls.resolve("client.properties");
        List<String> lines = List.of(
                "security.protocol=SASL_SSL",
                "sasl.mechanism=" + MECHANISM,
                "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
                        + USER + "\" password=\"" + USER_PASSWORD + "\";",
                "ssl.truststore.location=" + truststore,
                "ssl.truststore.password=" + STORE_PASSWORD,
                "ssl.truststore.type=PKCS12",
                "ssl.protocol=" + TLS_VERSION,
                "ssl.enabled.protocols=" + TLS_VERSION,
                "");
        Files.writeString(client, String.join("\n", lines), StandardCharsets.UTF_8);
        return new SaslSslSetup(keystore, truststore, client);
    }

    /** The file the perf tools read with {@code --command-config} for a SASL_SSL run. */
    Path clientProperties() {
        return clientProperties;
    }

    /** The TLS and SASL settings both brokers share, with Kafka's names (listeners aside). */
    List<String> brokerSecuritySettings() {
        return List.of(
                "ssl.keystore.location=" + keystore,
                "ssl.keystore.password=" + STORE_PASSWORD,
                "ssl.keystore.type=PKCS12",
                "ssl.enabled.protocols=" + TLS_VERSION,
                "sasl.enabled.mechanisms=" + MECHANISM);
    }

    /** Millrace's {@code --set} settings: a PLAINTEXT and a SASL_SSL listener plus {@link #brokerSecuritySettings}. */
    List<String> millraceSettings(int plainPort, int securePort) {
        List<String> settings = new ArrayList<>(List.of(
                "listeners=PLAINTEXT://127.0.0.1:" + plainPort + ",SASL_SSL://127.0.0.1:" + securePort,
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL",
                "inter.broker.listener.name=PLAINTEXT"));
        settings.addAll(brokerSecuritySettings());
        return settings;
    }

    /**
     * Kafka's server.properties lines: the same two listeners beside its CONTROLLER listener, the same
     * {@link #brokerSecuritySettings}, and the JAAS entry Kafka needs for SCRAM on a listener (the login module with
     * no options: the credentials come from the metadata). These replace the single-listener defaults of
     * {@link BrokerNode#startKafka}.
     */
    List<String> kafkaProperties(int plainPort, int securePort, int controllerPort) {
        List<String> properties = new ArrayList<>(List.of(
                "listeners=PLAINTEXT://127.0.0.1:" + plainPort + ",SASL_SSL://127.0.0.1:" + securePort
                        + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + plainPort + ",SASL_SSL://127.0.0.1:" + securePort,
                "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL",
                "listener.name.sasl_ssl." + MECHANISM.toLowerCase(Locale.ROOT)
                        + ".sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"));
        properties.addAll(brokerSecuritySettings());
        return properties;
    }

    /**
     * Creates the SCRAM user on {@code node} through its PLAINTEXT listener, then waits (up to a minute) until that
     * user can describe the cluster over {@code secureBootstrap}: Kafka serves a new credential once its broker side
     * has replayed the metadata record.
     */
    void createUser(BrokerNode node, String secureBootstrap) throws InterruptedException {
        Properties plain = new Properties();
        plain.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrap());
        plain.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        try (Admin admin = Admin.create(plain)) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(USER,
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, SCRAM_ITERATIONS), USER_PASSWORD)))
                    .all().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException(node.name() + ": could not create SCRAM user " + USER, e);
        }
        Properties secure = new Properties();
        try (var in = Files.newBufferedReader(clientProperties, StandardCharsets.UTF_8)) {
            secure.load(in);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + clientProperties, e);
        }
        secure.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, secureBootstrap);
        secure.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        secure.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 15_000);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try (Admin admin = Admin.create(secure)) {
                admin.describeCluster().nodes().get(15, TimeUnit.SECONDS);
                return;
            } catch (ExecutionException | TimeoutException e) {
                last = e;
                Thread.sleep(500);
            }
        }
        throw new IllegalStateException(node.name() + ": user " + USER + " cannot log in over SASL_SSL at "
                + secureBootstrap, last);
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("keytool " + args[0] + " did not finish within 60 s");
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException("keytool " + String.join(" ", args) + " exited with "
                    + process.exitValue() + ": " + output.strip());
        }
    }
}
