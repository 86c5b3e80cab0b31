package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import com.alipay.sofa.jraft.util.RpcFactoryHelper;

import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.config.ConfigurationException;
import dev.millrace.broker.controller.QuorumRpcFactory;

/**
 * {@code controller.quorum.security.protocol=SSL}: the metadata quorum's port speaks mutual TLS only. Two voters
 * with the same CA-signed key elect a leader and replicate the metadata (a topic created through one node is
 * described by the other); on a voter's quorum port a TLS client with a certificate of the same authority
 * completes the handshake, while one without a certificate, one whose certificate nobody trusts and a client
 * speaking plaintext are cut off.
 */
@Timeout(180)
class QuorumTlsIntegrationTest {

    @TempDir
    Path tmp;

    @Test
    void shouldRunTheQuorumOverMutualTlsAndRefuseOtherPeers() throws Exception {
        assertThat(RpcFactoryHelper.rpcFactory()).isInstanceOf(QuorumRpcFactory.class);
        TestCerts certs = TestCerts.create(tmp);
        Map<String, String> settings = new HashMap<>();
        settings.put("controller.quorum.security.protocol", "SSL");
        settings.put("ssl.keystore.location", certs.brokerKeystore.toString());
        settings.put("ssl.keystore.password", TestCerts.PASSWORD);
        try (InProcessCluster cluster = InProcessCluster.start(tmp.resolve("cluster"), 2, settings)) {
            Properties client = new Properties();
            client.put("bootstrap.servers", cluster.address(1));
            client.put("default.api.timeout.ms", "60000");
            try (Admin admin = Admin.create(client)) {
                admin.createTopics(List.of(new NewTopic("over-tls", 2, (short) 2))).all().get(60, TimeUnit.SECONDS);
            }
            cluster.awaitCondition(() -> cluster.broker(2).controller().image().topic("over-tls").isPresent(),
                    "node 2 applies the topic committed through the TLS quorum", Duration.ofSeconds(30));

            InetSocketAddress quorum = quorumAddress(cluster.voters(), 1);
            Path sameCa = certs.clientKeystore("peer", "CN=peer");
            try (SSLSocket trusted = tls(quorum, certs.truststore, sameCa)) {
                trusted.startHandshake();
                assertThat(trusted.getSession().getProtocol()).startsWith("TLSv1.");
            }
            assertCutOff(() -> tls(quorum, certs.truststore, null));
            assertCutOff(() -> tls(quorum, certs.truststore, certs.untrustedKeystore("stranger", "CN=stranger")));
            try (Socket plain = new Socket()) {
                plain.connect(quorum, 5_000);
                plain.setSoTimeout(30_000);
                OutputStream out = plain.getOutputStream();
                out.write(new byte[] {1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
                out.flush();
                assertThat(readUntilClosed(plain.getInputStream())).isTrue();
            }
            // the quorum kept working after the refused peers
            try (Admin admin = Admin.create(client)) {
                admin.createTopics(List.of(new NewTopic("after-strangers", 1, (short) 2))).all()
                        .get(60, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void shouldNameTheKeystoreWhenTheQuorumCannotUseIt() throws IOException {
        Map<String, String> cluster = Map.of("controller.quorum.voters", "1@127.0.0.1:19093", "node.id", "1",
                "controller.quorum.security.protocol", "ssl");
        assertThatThrownBy(() -> BrokerConfigLoader.fromMap(cluster)).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("ssl.keystore.location: must be set: controller.quorum.security.protocol is "
                        + "SSL");
        Map<String, String> pem = new HashMap<>(cluster);
        pem.put("ssl.keystore.location", Files.writeString(tmp.resolve("k.pem"), "x").toString());
        pem.put("ssl.keystore.type", "PEM");
        assertThatThrownBy(() -> BrokerConfigLoader.fromMap(pem)).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("ssl.keystore.type: PEM cannot be used by the metadata quorum");
        Map<String, String> garbage = new HashMap<>(cluster);
        garbage.put("ssl.keystore.location", Files.writeString(tmp.resolve("k.p12"), "not a store").toString());
        garbage.put("ssl.keystore.password", "pw");
        garbage.put("data.dir", tmp.resolve("data").toString());
        BrokerServer broker = new BrokerServer(BrokerConfigLoader.fromMap(garbage),
                org.apache.kafka.common.utils.Time.SYSTEM);
        try {
            assertThatThrownBy(broker::start).isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("ssl.keystore.location: cannot load " + tmp.resolve("k.p12"))
                    .hasMessageContaining("controller.quorum.security.protocol=SSL");
        } finally {
            broker.close();
        }
    }

    private interface Connect {
        SSLSocket open() throws Exception;
    }

    /** The handshake fails, or the voter closes the connection right after it (TLS 1.3 checks the client late). */
    private static void assertCutOff(Connect connect) throws Exception {
        try (SSLSocket socket = connect.open()) {
            try {
                socket.startHandshake();
                assertThat(readUntilClosed(socket.getInputStream())).isTrue();
            } catch (javax.net.ssl.SSLException | java.net.SocketException refused) {
                // refused in the handshake
            }
        }
    }

    /** True once the peer closed (end of stream or a reset); reads and drops what comes before. */
    private static boolean readUntilClosed(InputStream in) {
        byte[] buffer = new byte[512];
        try {
            while (in.read(buffer) >= 0) {
                // keep reading
            }
            return true;
        } catch (javax.net.ssl.SSLException | java.net.SocketException closed) {
            return true;
        } catch (IOException timedOut) {
            return false;
        }
    }

    private static SSLSocket tls(InetSocketAddress address, Path truststore, Path keystore) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(truststore)) {
            trust.load(in, TestCerts.PASSWORD.toCharArray());
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        KeyManagerFactory kmf = null;
        if (keystore != null) {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(keystore)) {
                keys.load(in, TestCerts.PASSWORD.toCharArray());
            }
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, TestCerts.PASSWORD.toCharArray());
        }
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        Socket plain = new Socket();
        plain.connect(address, 5_000);
        plain.setSoTimeout(30_000);
        return (SSLSocket) context.getSocketFactory().createSocket(plain, address.getHostString(),
                address.getPort(), true);
    }

    private static InetSocketAddress quorumAddress(String voters, int nodeId) {
        for (String entry : voters.split(",")) {
            String[] idAndAddress = entry.split("@");
            if (Integer.parseInt(idAndAddress[0]) == nodeId) {
                int colon = idAndAddress[1].lastIndexOf(':');
                return new InetSocketAddress(idAndAddress[1].substring(0, colon),
                        Integer.parseInt(idAndAddress[1].substring(colon + 1)));
            }
        }
        throw new IllegalArgumentException("node " + nodeId + " is not in " + voters);
    }
}
