package dev.millrace.broker.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.security.ssl.DefaultSslEngineFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.config.BrokerConfig;
import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.network.ApiVersionTable;
import dev.millrace.broker.network.KafkaServer;
import dev.millrace.broker.network.RequestHandler;
import dev.millrace.broker.server.TestCerts;

/**
 * The principal each request carries on TLS and SASL listeners, and the refusal of requests before SASL
 * authentication, seen from a request handler behind real listeners, with raw Kafka frames on loopback sockets.
 */
@Timeout(60)
class ListenerPrincipalTest {

    private static final ApiVersionTable VERSIONS = new ApiVersionTable.Builder().addAll(ApiKeys.API_VERSIONS)
            .addAll(ApiKeys.METADATA).add(ApiKeys.SASL_HANDSHAKE, 1, 1).addAll(ApiKeys.SASL_AUTHENTICATE).build();

    @TempDir
    Path tmp;

    private final List<RequestContext> served = new CopyOnWriteArrayList<>();
    private final ExecutorService requests = Executors.newFixedThreadPool(2);
    private KafkaServer server;
    private BrokerListenerSecurity security;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        if (security != null) {
            security.close();
        }
        requests.shutdownNow();
    }

    @Test
    void shouldNameTheClientCertificateSubjectAsPrincipalOnAnSslListenerRequiringCertificates() throws Exception {
        TestCerts certs = TestCerts.create(tmp);
        Path alice = certs.clientKeystore("alice", "CN=alice,O=Millrace Tests");
        BrokerConfig config = BrokerConfigLoader.fromMap(Map.of("listeners", "SSL://127.0.0.1:0",
                "ssl.keystore.location", certs.brokerKeystore.toString(), "ssl.keystore.password", TestCerts.PASSWORD,
                "ssl.truststore.location", certs.truststore.toString(), "ssl.truststore.password", TestCerts.PASSWORD,
                "ssl.client.auth", "required", "controller.port", "19093"));
        InetSocketAddress address = start(config);
        SSLContext context = clientContext(alice, certs);
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(address.getHostString(),
                address.getPort())) {
            ApiVersionsResponse response = (ApiVersionsResponse) call(socket, new ApiVersionsRequest.Builder().build(),
                    1);
            assertThat(response.data().errorCode()).isEqualTo(Errors.NONE.code());
        }
        assertThat(served).singleElement().satisfies(c -> {
            assertThat(c.principal.toString()).isEqualTo("User:CN=alice,O=Millrace Tests");
            assertThat(c.listenerName.value()).isEqualTo("SSL");
        });
    }

    @Test
    void shouldRefuseATlsVersionOutsideSslEnabledProtocols() throws Exception {
        TestCerts certs = TestCerts.create(tmp);
        BrokerConfig config = BrokerConfigLoader.fromMap(Map.of("listeners", "SSL://127.0.0.1:0",
                "ssl.keystore.location", certs.brokerKeystore.toString(), "ssl.keystore.password", TestCerts.PASSWORD,
                "ssl.enabled.protocols", "TLSv1.3", "controller.port", "19093"));
        InetSocketAddress address = start(config);
        SSLContext context = clientContext(null, certs);
        try (SSLSocket tls12 = (SSLSocket) context.getSocketFactory().createSocket(address.getHostString(),
                address.getPort())) {
            tls12.setEnabledProtocols(new String[] {"TLSv1.2"});
            org.assertj.core.api.Assertions.assertThatThrownBy(tls12::startHandshake)
                    .isInstanceOf(javax.net.ssl.SSLHandshakeException.class);
        }
        try (SSLSocket tls13 = (SSLSocket) context.getSocketFactory().createSocket(address.getHostString(),
                address.getPort())) {
            tls13.setEnabledProtocols(new String[] {"TLSv1.3"});
            call(tls13, new ApiVersionsRequest.Builder().build(), 1);
            assertThat(tls13.getSession().getProtocol()).isEqualTo("TLSv1.3");
        }
        assertThat(served).singleElement().satisfies(c -> assertThat(c.principal.toString())
                .isEqualTo("User:ANONYMOUS"));
    }

    @Test
    void shouldNameTheSaslUserAsPrincipalAndRefuseRequestsBeforeAuthentication() throws Exception {
        BrokerConfig config = BrokerConfigLoader.fromMap(Map.of("listeners", "SASL_PLAINTEXT://127.0.0.1:0",
                "sasl.enabled.mechanisms", "PLAIN", "controller.port", "19093",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"secret\";"));
        InetSocketAddress address = start(config);
        // a Metadata request first: the connection closes and the handler never sees it
        try (Socket socket = new Socket(address.getHostString(), address.getPort())) {
            send(socket, new MetadataRequest(new MetadataRequestData(), (short) 12), 7);
            assertThat(new DataInputStream(socket.getInputStream()).read()).isEqualTo(-1);
        }
        assertThat(served).isEmpty();
        try (Socket socket = new Socket(address.getHostString(), address.getPort())) {
            call(socket, new ApiVersionsRequest.Builder().build(), 1);
            SaslHandshakeResponse handshake = (SaslHandshakeResponse) call(socket, new SaslHandshakeRequest.Builder(
                    new SaslHandshakeRequestData().setMechanism("PLAIN")).build((short) 1), 2);
            assertThat(handshake.error()).isEqualTo(Errors.NONE);
            assertThat(handshake.enabledMechanisms()).containsExactly("PLAIN");
            SaslAuthenticateResponse auth = (SaslAuthenticateResponse) call(socket, new SaslAuthenticateRequest
                    .Builder(new SaslAuthenticateRequestData().setAuthBytes("\u0000alice\u0000secret"
                    .getBytes(StandardCharsets.UTF_8))).build((short) 2), 3);
            assertThat(auth.error()).isEqualTo(Errors.NONE);
            MetadataResponse metadata = (MetadataResponse) call(socket, new MetadataRequest(new MetadataRequestData(),
                    (short) 12), 4);
            assertThat(metadata.data().brokers()).isEmpty();
        }
        assertThat(served).extracting(c -> c.header.apiKey()).containsExactly(ApiKeys.API_VERSIONS, ApiKeys.METADATA);
        assertThat(served.get(0).principal.toString()).isEqualTo("User:ANONYMOUS");
        assertThat(served.get(1).principal.toString()).isEqualTo("User:alice");
    }

    @Test
    void shouldAnswerAWrongPasswordWithSaslAuthenticationFailedAndClose() throws Exception {
        BrokerConfig config = BrokerConfigLoader.fromMap(Map.of("listeners", "SASL_PLAINTEXT://127.0.0.1:0",
                "sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512", "controller.port", "19093",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"secret\";"));
        InetSocketAddress address = start(config);
        try (Socket socket = new Socket(address.getHostString(), address.getPort())) {
            SaslHandshakeResponse unknown = (SaslHandshakeResponse) call(socket, new SaslHandshakeRequest.Builder(
                    new SaslHandshakeRequestData().setMechanism("GSSAPI")).build((short) 1), 1);
            assertThat(unknown.error()).isEqualTo(Errors.UNSUPPORTED_SASL_MECHANISM);
            assertThat(unknown.enabledMechanisms()).containsExactly("PLAIN", "SCRAM-SHA-512");
            assertThat(new DataInputStream(socket.getInputStream()).read()).isEqualTo(-1);
        }
        try (Socket socket = new Socket(address.getHostString(), address.getPort())) {
            call(socket, new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism("PLAIN"))
                    .build((short) 1), 1);
            SaslAuthenticateResponse auth = (SaslAuthenticateResponse) call(socket, new SaslAuthenticateRequest
                    .Builder(new SaslAuthenticateRequestData().setAuthBytes("\u0000alice\u0000guess"
                    .getBytes(StandardCharsets.UTF_8))).build((short) 2), 2);
            assertThat(auth.error()).isEqualTo(Errors.SASL_AUTHENTICATION_FAILED);
            assertThat(new DataInputStream(socket.getInputStream()).read()).isEqualTo(-1);
        }
        assertThat(served).isEmpty();
    }

    private InetSocketAddress start(BrokerConfig config) throws InterruptedException {
        security = BrokerListenerSecurity.forListeners(config, ScramCredentials.NONE).get(0);
        RequestHandler handler = (context, request) -> {
            served.add(context);
            AbstractResponse response = context.header.apiKey() == ApiKeys.API_VERSIONS
                    ? new ApiVersionsResponse(new ApiVersionsResponseData().setApiKeys(VERSIONS.toResponseData()
                    .apiKeys()))
                    : new MetadataResponse(new MetadataResponseData(), context.apiVersion());
            return CompletableFuture.completedFuture(response);
        };
        server = new KafkaServer("127.0.0.1", 0, 1024 * 1024, handler, VERSIONS, requests, security);
        return server.start();
    }

    /** A client context trusting the test CA, with {@code keystore}'s key when not null. */
    private static SSLContext clientContext(Path keystore, TestCerts certs) {
        Map<String, Object> configs = new java.util.HashMap<>(Map.of("ssl.truststore.location",
                certs.truststore.toString(), "ssl.truststore.password", TestCerts.PASSWORD));
        if (keystore != null) {
            configs.put("ssl.keystore.location", keystore.toString());
            configs.put("ssl.keystore.password", TestCerts.PASSWORD);
        }
        DefaultSslEngineFactory factory = new DefaultSslEngineFactory();
        factory.configure(new org.apache.kafka.common.config.ConfigDef().withClientSslSupport().parse(configs));
        return factory.sslContext();
    }

    private static AbstractResponse call(Socket socket, AbstractRequest request, int correlationId)
            throws IOException {
        RequestHeader header = send(socket, request, correlationId);
        DataInputStream in = new DataInputStream(socket.getInputStream());
        int size;
        try {
            size = in.readInt();
        } catch (EOFException e) {
            throw new IOException("the broker closed the connection instead of answering " + request.apiKey(), e);
        }
        byte[] body = new byte[size];
        in.readFully(body);
        return AbstractResponse.parseResponse(ByteBuffer.wrap(body), header);
    }

    private static RequestHeader send(Socket socket, AbstractRequest request, int correlationId) throws IOException {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), "principal-test",
                correlationId);
        ByteBuffer frame = request.serializeWithHeader(header);
        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.writeInt(frame.remaining());
        out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
        out.flush();
        return header;
    }
}
