package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterConfigsResource;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;

import dev.millrace.broker.controller.Controller.GroupConfigChange;
import dev.millrace.broker.share.ShareGroupConfigHandler;

/**
 * Splits a config request by resource type and joins the answers into one response:
 *
 * <ul>
 *   <li>IncrementalAlterConfigs: {@code GROUP} resources are group settings, changed at the active controller like
 *       topic configs ({@link TopicAdminHandler#alterGroupConfigs}; a request another node forwarded is answered by
 *       this node's controller), which validates them and commits them to the metadata log, from which every broker
 *       applies them. SET and DELETE are served; APPEND and SUBTRACT are INVALID_REQUEST (no group setting is a list).
 *       Other resources go to {@link TopicAdminHandler#incrementalAlterConfigs}.</li>
 *   <li>DescribeConfigs: {@code GROUP} resources are read from this broker's image
 *       ({@link ShareGroupConfigHandler}), the others from the {@link TopicAdminHandler}.</li>
 * </ul>
 *
 * <p>Stateless; thread-safe.
 */
final class GroupConfigRouting {

    private GroupConfigRouting() {
    }

    static CompletableFuture<IncrementalAlterConfigsResponse> incrementalAlterConfigs(
            IncrementalAlterConfigsRequest request, short version, TopicAdminHandler topicAdmin, boolean forwarded) {
        IncrementalAlterConfigsRequestData data = request.data();
        IncrementalAlterConfigsRequestData others = new IncrementalAlterConfigsRequestData()
                .setValidateOnly(data.validateOnly());
        List<AlterConfigsResourceResponse> refused = new ArrayList<>();
        Map<String, GroupConfigChange> groups = new LinkedHashMap<>();
        for (AlterConfigsResource resource : data.resources()) {
            if (resource.resourceType() != ConfigResource.Type.GROUP.id()) {
                others.resources().add(resource.duplicate());
                continue;
            }
            String problem = groups.containsKey(resource.resourceName())
                    ? "Group " + resource.resourceName() + " is named twice in one request" : null;
            Map<String, String> set = new HashMap<>();
            List<String> delete = new ArrayList<>();
            for (IncrementalAlterConfigsRequestData.AlterableConfig c : resource.configs()) {
                if (c.configOperation() == 0) {
                    set.put(c.name(), c.value());
                } else if (c.configOperation() == 1) {
                    delete.add(c.name());
                } else if (problem == null) {
                    problem = "Operation " + c.configOperation() + " (APPEND/SUBTRACT) on group config " + c.name()
                            + " is not supported; use SET";
                }
            }
            if (problem != null) {
                refused.add(new AlterConfigsResourceResponse().setResourceType(ConfigResource.Type.GROUP.id())
                        .setResourceName(resource.resourceName()).setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage(problem));
            } else {
                groups.put(resource.resourceName(), new GroupConfigChange(set, delete));
            }
        }
        CompletableFuture<IncrementalAlterConfigsResponseData> topics = others.resources().isEmpty()
                ? CompletableFuture.completedFuture(new IncrementalAlterConfigsResponseData())
                : topicAdmin.incrementalAlterConfigs(new IncrementalAlterConfigsRequest(others, version), forwarded)
                        .thenApply(IncrementalAlterConfigsResponse::data);
        return topics.thenCombine(topicAdmin.alterGroupConfigs(groups, data.validateOnly(), forwarded),
                (topicResults, groupResults) -> {
                    IncrementalAlterConfigsResponseData joined = topicResults.duplicate();
                    groupResults.forEach((groupId, error) -> joined.responses().add(new AlterConfigsResourceResponse()
                            .setResourceType(ConfigResource.Type.GROUP.id()).setResourceName(groupId)
                            .setErrorCode(error.error().code()).setErrorMessage(error.message())));
                    refused.forEach(r -> joined.responses().add(r.duplicate()));
                    return new IncrementalAlterConfigsResponse(joined);
                });
    }

    static DescribeConfigsResponse describeConfigs(DescribeConfigsRequest request, short version,
                                                   TopicAdminHandler topicAdmin, ShareGroupConfigHandler groups) {
        DescribeConfigsRequestData data = request.data();
        DescribeConfigsRequestData others = new DescribeConfigsRequestData()
                .setIncludeSynonyms(data.includeSynonyms()).setIncludeDocumentation(data.includeDocumentation());
        DescribeConfigsResponseData joined = new DescribeConfigsResponseData();
        for (DescribeConfigsRequestData.DescribeConfigsResource resource : data.resources()) {
            if (resource.resourceType() == ConfigResource.Type.GROUP.id()) {
                joined.results().add(groups.describe(resource));
            } else {
                others.resources().add(resource.duplicate());
            }
        }
        if (!others.resources().isEmpty()) {
            joined.results().addAll(0, topicAdmin.describeConfigs(new DescribeConfigsRequest(others, version))
                    .data().results());
        }
        return new DescribeConfigsResponse(joined);
    }
}
