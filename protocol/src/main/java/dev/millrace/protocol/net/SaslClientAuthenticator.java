package dev.millrace.protocol.net;

import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiFunction;

import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslClient;
import javax.security.sasl.SaslException;

import org.apache.kafka.common.errors.IllegalSaslStateException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.UnsupportedSaslMechanismException;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslClient;

/**
 * The client side of Kafka's SASL authentication (KIP-152), for Millrace's own connections: SaslHandshake v1 naming
 * the mechanism, then SaslAuthenticate requests carrying the tokens until the mechanism completes. The mechanisms are
 * the JDK's PLAIN client and kafka-clients' {@link ScramSaslClient}; nothing here computes a proof.
 *
 * <pre>
 *   client                                     broker
 *     | -- SaslHandshake(mechanism) ---------&gt; |   UNSUPPORTED_SASL_MECHANISM: UnsupportedSaslMechanismException
 *     | &lt;------------ mechanisms, NONE -------- |
 *     | -- SaslAuthenticate(first token) ----&gt; |   PLAIN: \0user\0password; SCRAM: client-first
 *     | &lt;------------ challenge -------------- |   SASL_AUTHENTICATION_FAILED: SaslAuthenticationException
 *     | -- SaslAuthenticate(next token) -----&gt; |   SCRAM: client-final (proof)
 *     | &lt;------------ server-final ----------- |   the client checks the server's signature
 * </pre>
 *
 * <p>Not thread-safe: one per connection, each step after the previous one's response.
 */
public final class SaslClientAuthenticator {

    /** The mechanisms Millrace's clients speak. */
    public static final List<String> MECHANISMS = List.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512");

    private static final short HANDSHAKE_VERSION = 1;
    private static final short AUTHENTICATE_VERSION = 1;

    private final String mechanism;
    private final SaslClient client;

    SaslClientAuthenticator(String mechanism, String user, String password, String host) {
        this.mechanism = mechanism;
        javax.security.auth.callback.CallbackHandler callbacks = all -> handle(all, user, password);
        try {
            if (mechanism.equals("PLAIN")) {
                client = Sasl.createSaslClient(new String[] {"PLAIN"}, null, "kafka", host, Map.of(), callbacks);
                if (client == null) {
                    throw new IllegalStateException("this JVM has no SASL PLAIN client");
                }
            } else {
                client = new ScramSaslClient(ScramMechanism.forMechanismName(mechanism), callbacks);
            }
        } catch (SaslException | NoSuchAlgorithmException e) {
            throw new IllegalStateException("cannot start a " + mechanism + " client", e);
        }
    }

    /**
     * Runs the exchange over {@code send} (a request at a version, answered by its response); completes when the
     * broker accepted the credentials, or fails with kafka-clients' {@link SaslAuthenticationException} or
     * {@link UnsupportedSaslMechanismException}.
     */
    public CompletableFuture<Void> authenticate(
            BiFunction<AbstractRequest.Builder<?>, Short, CompletableFuture<? extends AbstractResponse>> send) {
        SaslHandshakeRequest.Builder handshake = new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData()
                .setMechanism(mechanism));
        return send.apply(handshake, HANDSHAKE_VERSION).thenCompose(r -> {
            SaslHandshakeResponse response = (SaslHandshakeResponse) r;
            if (response.error() == Errors.UNSUPPORTED_SASL_MECHANISM) {
                throw new CompletionException(new UnsupportedSaslMechanismException("the broker does not offer "
                        + mechanism + "; it offers " + response.enabledMechanisms()));
            }
            if (response.error() != Errors.NONE) {
                throw new CompletionException(response.error().exception());
            }
            return step(send, evaluate(new byte[0]));
        });
    }

    private CompletableFuture<Void> step(
            BiFunction<AbstractRequest.Builder<?>, Short, CompletableFuture<? extends AbstractResponse>> send,
            byte[] token) {
        SaslAuthenticateRequest.Builder request = new SaslAuthenticateRequest.Builder(
                new SaslAuthenticateRequestData().setAuthBytes(token == null ? new byte[0] : token));
        return send.apply(request, AUTHENTICATE_VERSION).thenCompose(r -> {
            SaslAuthenticateResponse response = (SaslAuthenticateResponse) r;
            if (response.error() == Errors.SASL_AUTHENTICATION_FAILED) {
                throw new CompletionException(new SaslAuthenticationException(response.errorMessage()));
            }
            if (response.error() != Errors.NONE) {
                throw new CompletionException(response.error().exception(response.errorMessage()));
            }
            byte[] next = client.isComplete() ? null : evaluate(response.saslAuthBytes());
            if (client.isComplete() && (next == null || next.length == 0)) {
                return CompletableFuture.completedFuture(null);
            }
            return step(send, next);
        });
    }

    private byte[] evaluate(byte[] challenge) {
        try {
            if (challenge.length == 0 && !client.hasInitialResponse()) {
                return new byte[0];
            }
            return client.evaluateChallenge(challenge);
        } catch (SaslException e) {
            // SCRAM: the broker's final message does not prove it knows the credential
            throw new CompletionException(new IllegalSaslStateException(mechanism + " exchange failed: "
                    + e.getMessage(), e));
        }
    }

    private static void handle(Callback[] callbacks, String user, String password)
            throws UnsupportedCallbackException {
        for (Callback callback : callbacks) {
            if (callback instanceof NameCallback name) {
                name.setName(user);
            } else if (callback instanceof PasswordCallback pw) {
                pw.setPassword(password.toCharArray());
            } else {
                throw new UnsupportedCallbackException(callback);
            }
        }
    }
}
