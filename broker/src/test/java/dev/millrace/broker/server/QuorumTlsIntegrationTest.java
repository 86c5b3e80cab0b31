package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.HashMap;
import java.util.Map;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.config.ConfigurationException;

/**
 * {@code controller.quorum.security.protocol=SSL} with a key store the quorum cannot use: the setting is named at load
 * or at start. The quorum running over mutual TLS is shown in {@link InterBrokerSecurityIntegrationTest}, whose
 * cluster secures both the quorum and the inter-broker listener (one cluster start for both); the helpers that probe
 * a quorum port are here.
 */
@Timeout(60)
class QuorumTlsIntegrationTest {

    @TempDir
    Path tmp;

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

    interface Connect {
        SSLSocket open() throws Exception;
    }

    /** The handshake fails, or the voter closes the connection right after it (TLS 1.3 checks the client late). */
    static void assertCutOff(Connect connect) throws Exception {
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
    static boolean readUntilClosed(InputStream in) {
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

    static SSLSocket tls(InetSocketAddress address, Path truststore, Path keystore) throws Exception {
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

    static InetSocketAddress quorumAddress(String voters, int nodeId) {
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
