package dev.millrace.broker.security;

import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Map;

import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.sasl.SaslServer;

import org.apache.kafka.common.security.plain.PlainAuthenticateCallback;
import org.apache.kafka.common.security.plain.internals.PlainSaslServer;
import org.apache.kafka.common.security.scram.ScramCredentialCallback;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslServer;

/**
 * Creates the SASL server of a mechanism for one connection of one listener. The mechanisms are kafka-clients'
 * own ({@link PlainSaslServer}, {@link ScramSaslServer}); this class only gives them the users: PLAIN passwords
 * from the listener's JAAS configuration ({@link PlainUsers}), SCRAM credentials from the metadata
 * ({@link ScramCredentials}). Delegation tokens are not supported: their callback is refused, which fails the
 * authentication.
 *
 * <p>Immutable; thread-safe.
 */
final class SaslServers {

    private final List<String> mechanisms;
    private final PlainUsers plainUsers;
    private final ScramCredentials scram;

    /** @param plainUsers the PLAIN users, or null when PLAIN is not enabled */
    SaslServers(List<String> mechanisms, PlainUsers plainUsers, ScramCredentials scram) {
        this.mechanisms = List.copyOf(mechanisms);
        this.plainUsers = plainUsers;
        this.scram = scram;
    }

    List<String> mechanisms() {
        return mechanisms;
    }

    /** A new server for {@code mechanism}, which must be one of {@link #mechanisms()}. */
    SaslServer create(String mechanism) {
        if (mechanism.equals(PlainSaslServer.PLAIN_MECHANISM)) {
            return new PlainSaslServer(this::handlePlain);
        }
        ScramMechanism scramMechanism = ScramMechanism.forMechanismName(mechanism);
        try {
            return new ScramSaslServer(scramMechanism, Map.of(), callbacks -> handleScram(scramMechanism, callbacks));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("This JVM lacks " + scramMechanism.hashAlgorithm(), e);
        }
    }

    private void handlePlain(Callback[] callbacks) throws UnsupportedCallbackException {
        String user = null;
        for (Callback callback : callbacks) {
            if (callback instanceof NameCallback name) {
                user = name.getDefaultName();
            } else if (callback instanceof PlainAuthenticateCallback plain) {
                plain.authenticated(user != null && plainUsers.authenticate(user, plain.password()));
            } else {
                throw new UnsupportedCallbackException(callback);
            }
        }
    }

    private void handleScram(ScramMechanism mechanism, Callback[] callbacks) throws UnsupportedCallbackException {
        String user = null;
        for (Callback callback : callbacks) {
            if (callback instanceof NameCallback name) {
                user = name.getDefaultName();
            } else if (callback instanceof ScramCredentialCallback credential
                    && callback.getClass() == ScramCredentialCallback.class) {
                if (user != null) {
                    scram.lookup(user, mechanism).ifPresent(credential::scramCredential);
                }
            } else {
                // delegation tokens (DelegationTokenCredentialCallback) and anything else
                throw new UnsupportedCallbackException(callback);
            }
        }
    }
}
