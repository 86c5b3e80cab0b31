package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;

import dev.millrace.broker.group.GroupCoordinator;
import dev.millrace.broker.share.ShareGroupAdmin;

/**
 * DeleteGroups across both coordinators: ids of share groups are deleted by {@link ShareGroupAdmin}
 * (this is how {@code Admin#deleteShareGroups} arrives), the others go to the classic
 * {@link GroupCoordinator}; the results are joined.
 *
 * <p>Stateless; thread-safe.
 */
final class ShareAdminRouting {

    private ShareAdminRouting() {
    }

    static CompletableFuture<DeleteGroupsResponse> deleteGroups(DeleteGroupsRequest request, short version,
                                                               GroupCoordinator groups, ShareGroupAdmin shares) {
        DeleteGroupsResponseData shareResults = new DeleteGroupsResponseData();
        List<String> classic = new ArrayList<>();
        for (String groupId : request.data().groupsNames()) {
            if (shares.isShareGroup(groupId)) {
                Errors error = shares.deleteGroup(groupId);
                shareResults.results().add(new DeleteGroupsResponseData.DeletableGroupResult().setGroupId(groupId)
                        .setErrorCode(error.code()));
            } else {
                classic.add(groupId);
            }
        }
        if (classic.isEmpty()) {
            return CompletableFuture.completedFuture(new DeleteGroupsResponse(shareResults));
        }
        DeleteGroupsRequest rest = new DeleteGroupsRequest.Builder(new DeleteGroupsRequestData()
                .setGroupsNames(classic)).build(version);
        return groups.handleDeleteGroups(rest, version).thenApply(response -> {
            DeleteGroupsResponseData joined = ((DeleteGroupsResponse) response).data().duplicate();
            shareResults.results().forEach(r -> joined.results().mustAdd(r.duplicate()));
            return new DeleteGroupsResponse(joined);
        });
    }
}
