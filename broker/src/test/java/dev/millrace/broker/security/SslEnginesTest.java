package dev.millrace.broker.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.HashMap;
import java.util.Map;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.TrustManagerFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.millrace.broker.config.ConfigurationException;
import dev.millrace.broker.server.TestCerts;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslHandler;

/**
 * Both TLS engines of the listeners ({@code ssl.engine}) from the same stores: a JDK client completes a handshake
 * with each, in memory, presenting its certificate where {@code ssl.client.auth=required}; the server sees the
 * client's certificate, the TLS versions follow {@code ssl.enabled.protocols}, and a client without a certificate
 * is refused. OpenSSL is netty-tcnative's BoringSSL, which the build ships for linux-x86_64 (this machine).
 */
@Timeout(60)
class SslEnginesTest {

    @TempDir
    Path tmp;

    @ParameterizedTest
    @ValueSource(strings = {"jdk", "openssl"})
    void shouldHandshakeWithAClientCertificateOnEitherEngine(String engine) throws Exception {
        TestCerts certs = TestCerts.create(tmp);
        Map<String, String> settings = settings(certs);
        settings.put("ssl.client.auth", "required");
        try (SslEngines engines = SslEngines.create(settings, engine)) {
            assertThat(engines.usesOpenSsl()).isEqualTo(engine.equals("openssl"));
            SslHandler handler = engines.newHandler(ByteBufAllocator.DEFAULT, "127.0.0.1", 40000);
            SSLEngine server = handler.engine();
            assertThat(server.getClass().getName().contains("OpenSsl")).isEqualTo(engine.equals("openssl"));
            SSLEngine client = client(certs, certs.clientKeystore("alice", "CN=alice"), "TLSv1.3");
            handshake(client, server);
            SSLSession session = server.getSession();
            assertThat(session.getProtocol()).isEqualTo("TLSv1.3");
            assertThat(session.getPeerPrincipal().getName()).isEqualTo("CN=alice");
            release(handler);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"jdk", "openssl"})
    void shouldKeepToTheEnabledProtocolsAndRefuseAClientWithoutACertificate(String engine) throws Exception {
        TestCerts certs = TestCerts.create(tmp);
        Map<String, String> settings = settings(certs);
        settings.put("ssl.enabled.protocols", "TLSv1.2");
        try (SslEngines engines = SslEngines.create(settings, engine)) {
            SslHandler handler = engines.newHandler(ByteBufAllocator.DEFAULT, "127.0.0.1", 40001);
            SSLEngine server = handler.engine();
            handshake(client(certs, null, "TLSv1.2,TLSv1.3"), server);
            assertThat(server.getSession().getProtocol()).isEqualTo("TLSv1.2");
            release(handler);
        }
        settings.put("ssl.client.auth", "required");
        try (SslEngines engines = SslEngines.create(settings, engine)) {
            SslHandler handler = engines.newHandler(ByteBufAllocator.DEFAULT, "127.0.0.1", 40002);
            SSLEngine anonymous = client(certs, null, "TLSv1.2");
            assertThatThrownBy(() -> handshake(anonymous, handler.engine())).isInstanceOf(SSLException.class);
            release(handler);
        }
    }

    @Test
    void shouldUseOpenSslByDefaultWhereItLoadsAndNameTheSettingWhenAStoreIsWrong() throws Exception {
        TestCerts certs = TestCerts.create(tmp);
        try (SslEngines engines = SslEngines.create(settings(certs), "auto")) {
            assertThat(engines.usesOpenSsl()).isEqualTo(OpenSsl.isAvailable()).isTrue();
        }
        Map<String, String> wrongPassword = settings(certs);
        wrongPassword.put("ssl.keystore.password", "wrong");
        assertThatThrownBy(() -> SslEngines.create(wrongPassword, "openssl"))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("ssl.keystore.password");
    }

    private static Map<String, String> settings(TestCerts certs) {
        Map<String, String> settings = new HashMap<>();
        settings.put("ssl.keystore.location", certs.brokerKeystore.toString());
        settings.put("ssl.keystore.password", TestCerts.PASSWORD);
        settings.put("ssl.keystore.type", "PKCS12");
        settings.put("ssl.truststore.location", certs.truststore.toString());
        settings.put("ssl.truststore.password", TestCerts.PASSWORD);
        settings.put("ssl.truststore.type", "PKCS12");
        settings.put("ssl.enabled.protocols", "TLSv1.3,TLSv1.2");
        return settings;
    }

    private static SSLEngine client(TestCerts certs, Path keystore, String protocols) throws Exception {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(load(certs.truststore));
        KeyManagerFactory kmf = null;
        if (keystore != null) {
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(load(keystore), TestCerts.PASSWORD.toCharArray());
        }
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        SSLEngine engine = context.createSSLEngine("127.0.0.1", 9093);
        engine.setUseClientMode(true);
        engine.setEnabledProtocols(protocols.split(","));
        return engine;
    }

    private static KeyStore load(Path store) throws Exception {
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, TestCerts.PASSWORD.toCharArray());
        }
        return keys;
    }

    /** Runs both engines' handshakes against each other in memory; throws what either side fails with. */
    private static void handshake(SSLEngine client, SSLEngine server) throws Exception {
        int size = Math.max(client.getSession().getPacketBufferSize(), server.getSession().getPacketBufferSize());
        ByteBuffer toServer = ByteBuffer.allocate(size * 4);
        ByteBuffer toClient = ByteBuffer.allocate(size * 4);
        ByteBuffer clientApp = ByteBuffer.allocate(size * 4);
        ByteBuffer serverApp = ByteBuffer.allocate(size * 4);
        ByteBuffer empty = ByteBuffer.allocate(0);
        client.beginHandshake();
        server.beginHandshake();
        for (int round = 0; round < 1_000; round++) {
            boolean clientDone = done(client);
            boolean serverDone = done(server);
            if (clientDone && serverDone && toServer.position() == 0 && toClient.position() == 0) {
                return;
            }
            step(client, empty, toServer, toClient, clientApp);
            step(server, empty, toClient, toServer, serverApp);
        }
        throw new AssertionError("handshake did not finish: client " + client.getHandshakeStatus() + ", server "
                + server.getHandshakeStatus());
    }

    private static boolean done(SSLEngine engine) {
        HandshakeStatus status = engine.getHandshakeStatus();
        return status == HandshakeStatus.NOT_HANDSHAKING || status == HandshakeStatus.FINISHED;
    }

    /**
     * One engine's turn: runs its tasks, wraps what it has to send into {@code out}, unwraps {@code in} (at least
     * once while handshaking, even with nothing new: an engine resumes there after a delegated task).
     */
    private static void step(SSLEngine engine, ByteBuffer empty, ByteBuffer out, ByteBuffer in, ByteBuffer app)
            throws SSLException {
        runTasks(engine);
        while (engine.getHandshakeStatus() == HandshakeStatus.NEED_WRAP) {
            SSLEngineResult result = engine.wrap(empty, out);
            runTasks(engine);
            if (result.bytesProduced() == 0) {
                break;
            }
        }
        in.flip();
        boolean first = true;
        while (in.hasRemaining() || first && !done(engine)) {
            first = false;
            SSLEngineResult result = engine.unwrap(in, app);
            runTasks(engine);
            if (result.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW
                    || result.bytesConsumed() == 0 && result.bytesProduced() == 0) {
                break;
            }
        }
        in.compact();
    }

    private static void runTasks(SSLEngine engine) {
        Runnable task;
        while ((task = engine.getDelegatedTask()) != null) {
            task.run();
        }
    }

    private static void release(SslHandler handler) {
        if (handler.engine() instanceof io.netty.util.ReferenceCounted counted) {
            counted.release();
        }
    }
}
