package dev.millrace.broker.security;

import java.util.Optional;

import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * Where SCRAM credentials are looked up at authentication: the salted credentials of the metadata image
 * ({@code UserScramCredentialRecord}), so every broker sees the same users.
 *
 * <p>Implementations are thread-safe and do not block (called on network threads).
 */
@FunctionalInterface
public interface ScramCredentials {

    ScramCredentials NONE = (user, mechanism) -> Optional.empty();

    /** The credential of {@code user} for {@code mechanism}, if one was created. */
    Optional<ScramCredential> lookup(String user, ScramMechanism mechanism);
}
