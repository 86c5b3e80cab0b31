package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.group.GroupCoordinator;
import dev.millrace.broker.share.ShareGroupAdmin;

/**
 * DeleteGroups across both coordinators: ids of share groups are deleted by {@link ShareGroupAdmin}
 * (this is how {@code Admin#deleteShareGroups} arrives), and on a cluster the other leaders of the topics the group
 * had state on drop its share-partitions ({@link ShareOffsetsRouting#dropElsewhere}; one that cannot be reached is
 * logged, the deletion stands); the others go to the classic {@link GroupCoordinator}; the results are joined.
 *
 * <p>Stateless; thread-safe.
 */
final class ShareAdminRouting {

    private static final Logger log = LoggerFactory.getLogger(ShareAdminRouting.class);

    private ShareAdminRouting() {
    }

    static CompletableFuture<DeleteGroupsResponse> deleteGroups(DeleteGroupsRequest request, short version,
                                                               GroupCoordinator groups, ShareGroupAdmin shares,
                                                               ShareOffsetsRouting routing) {
        DeleteGroupsResponseData shareResults = new DeleteGroupsResponseData();
        List<String> classic = new ArrayList<>();
        List<CompletableFuture<?>> passedOn = new ArrayList<>();
        for (String groupId : request.data().groupsNames()) {
            if (shares.isShareGroup(groupId)) {
                Set<String> topics = shares.topicsWithState(groupId);
                Errors error = shares.deleteGroup(groupId);
                shareResults.results().add(new DeleteGroupsResponseData.DeletableGroupResult().setGroupId(groupId)
                        .setErrorCode(error.code()));
                if (error == Errors.NONE && routing != null) {
                    passedOn.add(routing.dropElsewhere(groupId, topics).thenAccept(failures -> failures.forEach(
                            (topic, failure) -> log.warn("Share group {} was deleted, but a leader of {} may still "
                                    + "hold its share-partition until that broker restarts: {}", groupId, topic,
                                    failure.messageWithFallback()))));
                }
            } else {
                classic.add(groupId);
            }
        }
        if (classic.isEmpty()) {
            return CompletableFuture.allOf(passedOn.toArray(CompletableFuture[]::new))
                    .thenApply(ignored -> new DeleteGroupsResponse(shareResults));
        }
        DeleteGroupsRequest rest = new DeleteGroupsRequest.Builder(new DeleteGroupsRequestData()
                .setGroupsNames(classic)).build(version);
        return CompletableFuture.allOf(passedOn.toArray(CompletableFuture[]::new))
                .thenCompose(ignored -> groups.handleDeleteGroups(rest, version)).thenApply(response -> {
            DeleteGroupsResponseData joined = ((DeleteGroupsResponse) response).data().duplicate();
            shareResults.results().forEach(r -> joined.results().mustAdd(r.duplicate()));
            return new DeleteGroupsResponse(joined);
        });
    }
}
