package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.message.CreateAclsResponseData;
import org.apache.kafka.common.message.CreateAclsResponseData.AclCreationResult;
import org.apache.kafka.common.message.DeleteAclsResponseData;
import org.apache.kafka.common.message.DeleteAclsResponseData.DeleteAclsFilterResult;
import org.apache.kafka.common.message.DescribeAclsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.CreateAclsResponse;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsResponse;

import dev.millrace.broker.cluster.ControllerClient;
import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.Controller.AclDeletion;

/**
 * The Admin API of ACLs: CreateAcls and DeleteAcls go to the active controller (through the
 * {@link ControllerClient}, or straight to the local controller when another node forwarded them), which commits
 * the bindings to the metadata log; DescribeAcls answers from this broker's metadata image with the bindings the
 * filter matches, grouped by resource pattern. A filter that cannot match anything (an unknown field) answers
 * INVALID_REQUEST.
 *
 * <p>Thread-safe; called on request threads.
 */
final class AclAdminHandler {

    private final Controller controller;
    private final ControllerClient controllerClient;

    AclAdminHandler(Controller controller, ControllerClient controllerClient) {
        this.controller = controller;
        this.controllerClient = controllerClient;
    }

    CompletableFuture<CreateAclsResponse> create(CreateAclsRequest request, boolean forwarded) {
        List<AclBinding> creations = request.aclCreations().stream().map(CreateAclsRequest::aclBinding).toList();
        CompletableFuture<List<ApiError>> results = forwarded ? controller.createAcls(creations)
                : controllerClient.createAcls(creations);
        return results.thenApply(errors -> {
            CreateAclsResponseData data = new CreateAclsResponseData();
            errors.forEach(error -> data.results().add(new AclCreationResult().setErrorCode(error.error().code())
                    .setErrorMessage(error.message())));
            return new CreateAclsResponse(data);
        });
    }

    CompletableFuture<DeleteAclsResponse> delete(DeleteAclsRequest request, short version, boolean forwarded) {
        List<AclBindingFilter> filters = request.filters();
        CompletableFuture<List<AclDeletion>> results = forwarded ? controller.deleteAcls(filters)
                : controllerClient.deleteAcls(filters);
        return results.thenApply(deletions -> {
            DeleteAclsResponseData data = new DeleteAclsResponseData();
            for (AclDeletion deletion : deletions) {
                DeleteAclsFilterResult result = new DeleteAclsFilterResult()
                        .setErrorCode(deletion.error().error().code()).setErrorMessage(deletion.error().message());
                deletion.deleted().forEach(b -> result.matchingAcls().add(DeleteAclsResponse.matchingAcl(b,
                        ApiError.NONE)));
                data.filterResults().add(result);
            }
            return new DeleteAclsResponse(data, version);
        });
    }

    DescribeAclsResponse describe(DescribeAclsRequest request, short version) {
        AclBindingFilter filter = request.filter();
        DescribeAclsResponseData data = new DescribeAclsResponseData();
        if (filter.isUnknown()) {
            return new DescribeAclsResponse(data.setErrorCode(Errors.INVALID_REQUEST.code())
                    .setErrorMessage("The filter has an unknown field: " + filter.findIndefiniteField()), version);
        }
        List<AclBinding> matching = new ArrayList<>();
        for (AclBinding binding : controller.image().acls()) {
            if (filter.matches(binding)) {
                matching.add(binding);
            }
        }
        return new DescribeAclsResponse(data.setResources(DescribeAclsResponse.aclsResources(matching)), version);
    }
}
