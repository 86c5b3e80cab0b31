package dev.millrace.broker.controller;

import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData.ScramCredentialDeletion;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData.ScramCredentialUpsertion;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

import dev.millrace.broker.controller.MetadataRecord.RemoveUserScramCredentialRecord;
import dev.millrace.broker.controller.MetadataRecord.UserScramCredentialRecord;

/**
 * Computes the records of Kafka's AlterUserScramCredentials: an upsertion carries the salt, the iteration count
 * and the salted password the client computed (the password itself never leaves the client), from which the
 * stored and server keys are derived with kafka-clients' {@link ScramFormatter}; a deletion removes one mechanism's
 * credential. Results are per user and all-or-nothing per user: a user with one bad alteration gets that error
 * and none of its alterations is applied. Checks, with Kafka's errors:
 * <ul>
 *   <li>an empty user name: UNACCEPTABLE_CREDENTIAL;
 *   <li>a mechanism other than SCRAM-SHA-256 (1) and SCRAM-SHA-512 (2): UNSUPPORTED_SASL_MECHANISM;
 *   <li>the same user and mechanism twice in one request: DUPLICATE_RESOURCE;
 *   <li>iterations outside the mechanism's range (4096..16384), an empty salt or salted password:
 *       UNACCEPTABLE_CREDENTIAL;
 *   <li>deleting a credential that does not exist: RESOURCE_NOT_FOUND.
 * </ul>
 *
 * <p>Stateless; thread-safe.
 */
final class ScramControlManager {

    ControllerResult<Map<String, ApiError>> handleAlter(MetadataImage image,
                                                        AlterUserScramCredentialsRequestData request) {
        Map<String, ApiError> errors = new LinkedHashMap<>();
        Map<String, List<MetadataRecord>> records = new LinkedHashMap<>();
        Set<String> seen = new HashSet<>();
        for (ScramCredentialDeletion deletion : request.deletions()) {
            String user = deletion.name();
            records.computeIfAbsent(user, u -> new ArrayList<>());
            ApiError error = check(user, deletion.mechanism(), seen);
            if (error == null && image.scramCredential(user, mechanism(deletion.mechanism())).isEmpty()) {
                error = new ApiError(Errors.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does "
                        + "not exist: " + mechanism(deletion.mechanism()).mechanismName() + " of user " + user);
            }
            if (error != null) {
                errors.putIfAbsent(user, error);
            } else {
                records.get(user).add(new RemoveUserScramCredentialRecord(user, deletion.mechanism()));
            }
        }
        for (ScramCredentialUpsertion upsertion : request.upsertions()) {
            String user = upsertion.name();
            records.computeIfAbsent(user, u -> new ArrayList<>());
            ApiError error = check(user, upsertion.mechanism(), seen);
            if (error == null) {
                error = checkUpsertion(upsertion);
            }
            if (error != null) {
                errors.putIfAbsent(user, error);
                continue;
            }
            ScramCredential credential = credential(upsertion);
            records.get(user).add(new UserScramCredentialRecord(user, upsertion.mechanism(), credential.salt(),
                    credential.storedKey(), credential.serverKey(), credential.iterations()));
        }
        Map<String, ApiError> response = new LinkedHashMap<>();
        List<MetadataRecord> toCommit = new ArrayList<>();
        records.forEach((user, userRecords) -> {
            ApiError error = errors.get(user);
            if (error == null) {
                toCommit.addAll(userRecords);
                response.put(user, ApiError.NONE);
            } else {
                response.put(user, error);
            }
        });
        return new ControllerResult<>(toCommit, response);
    }

    private static ApiError check(String user, byte mechanism, Set<String> seen) {
        if (user == null || user.isEmpty()) {
            return new ApiError(Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty");
        }
        if (mechanism(mechanism) == null) {
            return new ApiError(Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism type " + mechanism
                    + "; known: 1 (SCRAM-SHA-256), 2 (SCRAM-SHA-512)");
        }
        if (!seen.add(user + "\u0000" + mechanism)) {
            return new ApiError(Errors.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same "
                    + "request: " + mechanism(mechanism).mechanismName() + " of user " + user);
        }
        return null;
    }

    private static ApiError checkUpsertion(ScramCredentialUpsertion upsertion) {
        ScramMechanism mechanism = mechanism(upsertion.mechanism());
        if (upsertion.iterations() < mechanism.minIterations()) {
            return new ApiError(Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations: " + upsertion.iterations()
                    + " (" + mechanism.mechanismName() + " needs at least " + mechanism.minIterations() + ")");
        }
        if (upsertion.iterations() > mechanism.maxIterations()) {
            return new ApiError(Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations: " + upsertion.iterations()
                    + " (" + mechanism.mechanismName() + " allows at most " + mechanism.maxIterations() + ")");
        }
        if (upsertion.salt() == null || upsertion.salt().length == 0 || upsertion.saltedPassword() == null
                || upsertion.saltedPassword().length == 0) {
            return new ApiError(Errors.UNACCEPTABLE_CREDENTIAL, "The salt and the salted password must not be empty");
        }
        return null;
    }

    private static ScramCredential credential(ScramCredentialUpsertion upsertion) {
        try {
            return new ScramFormatter(mechanism(upsertion.mechanism())).generateCredential(upsertion.salt(),
                    upsertion.saltedPassword(), upsertion.iterations());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("This JVM lacks " + mechanism(upsertion.mechanism()).hashAlgorithm(), e);
        }
    }

    /** The mechanism of a type byte, or null. */
    static ScramMechanism mechanism(byte type) {
        for (ScramMechanism mechanism : ScramMechanism.values()) {
            if (mechanism.type() == type) {
                return mechanism;
            }
        }
        return null;
    }
}
