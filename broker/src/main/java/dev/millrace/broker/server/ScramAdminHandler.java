package dev.millrace.broker.server;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData.UserName;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData.CredentialInfo;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterUserScramCredentialsRequest;
import org.apache.kafka.common.requests.AlterUserScramCredentialsResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsRequest;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsResponse;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

import dev.millrace.broker.cluster.ControllerClient;
import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.ScramCredentialImage;

/**
 * The Admin API of SCRAM users: AlterUserScramCredentials goes to the active controller (through the
 * {@link ControllerClient}, or straight to the local controller when another node forwarded it), which commits the
 * salted credentials to the metadata log; DescribeUserScramCredentials answers from this broker's metadata image
 * with each user's mechanisms and iteration counts (never a salt or key). Describing an unknown user answers
 * RESOURCE_NOT_FOUND for it; naming a user twice, DUPLICATE_RESOURCE.
 *
 * <p>Thread-safe; called on request threads.
 */
final class ScramAdminHandler {

    private final Controller controller;
    private final ControllerClient controllerClient;

    ScramAdminHandler(Controller controller, ControllerClient controllerClient) {
        this.controller = controller;
        this.controllerClient = controllerClient;
    }

    CompletableFuture<AlterUserScramCredentialsResponse> alter(AlterUserScramCredentialsRequest request,
                                                               boolean forwarded) {
        CompletableFuture<Map<String, ApiError>> results = forwarded
                ? controller.alterUserScramCredentials(request.data())
                : controllerClient.alterUserScramCredentials(request.data());
        return results.thenApply(byUser -> {
            AlterUserScramCredentialsResponseData data = new AlterUserScramCredentialsResponseData();
            byUser.forEach((user, error) -> data.results().add(new AlterUserScramCredentialsResult().setUser(user)
                    .setErrorCode(error.error().code()).setErrorMessage(error.message())));
            return new AlterUserScramCredentialsResponse(data);
        });
    }

    DescribeUserScramCredentialsResponse describe(DescribeUserScramCredentialsRequest request) {
        MetadataImage image = controller.image();
        DescribeUserScramCredentialsResponseData data = new DescribeUserScramCredentialsResponseData();
        if (request.data().users() == null || request.data().users().isEmpty()) {
            image.scramCredentials().forEach((user, credentials) -> data.results().add(describe(user, credentials)));
            return new DescribeUserScramCredentialsResponse(data);
        }
        Set<String> seen = new LinkedHashSet<>();
        Set<String> duplicates = new LinkedHashSet<>();
        for (UserName name : request.data().users()) {
            if (!seen.add(name.name())) {
                duplicates.add(name.name());
            }
        }
        for (String user : seen) {
            Map<String, ScramCredentialImage> credentials = image.scramCredentials().get(user);
            if (duplicates.contains(user)) {
                data.results().add(new DescribeUserScramCredentialsResult().setUser(user)
                        .setErrorCode(Errors.DUPLICATE_RESOURCE.code())
                        .setErrorMessage("Cannot describe user " + user + " twice in one request"));
            } else if (credentials == null) {
                data.results().add(new DescribeUserScramCredentialsResult().setUser(user)
                        .setErrorCode(Errors.RESOURCE_NOT_FOUND.code())
                        .setErrorMessage("Attempt to describe a user credential that does not exist: " + user));
            } else {
                data.results().add(describe(user, credentials));
            }
        }
        return new DescribeUserScramCredentialsResponse(data);
    }

    private static DescribeUserScramCredentialsResult describe(String user,
                                                                Map<String, ScramCredentialImage> credentials) {
        DescribeUserScramCredentialsResult result = new DescribeUserScramCredentialsResult().setUser(user)
                .setErrorCode(Errors.NONE.code());
        credentials.forEach((mechanism, credential) -> result.credentialInfos().add(new CredentialInfo()
                .setMechanism(ScramMechanism.forMechanismName(mechanism).type())
                .setIterations(credential.iterations())));
        return result;
    }
}
