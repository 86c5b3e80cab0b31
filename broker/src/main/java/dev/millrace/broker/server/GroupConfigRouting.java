package dev.millrace.broker.server;

import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;

import dev.millrace.broker.share.ShareGroupConfigHandler;

/**
 * Splits a config request by resource type: {@code GROUP} resources go to the share groups'
 * {@link ShareGroupConfigHandler}, the others to the {@link TopicAdminHandler}, and the answers are
 * joined into one response.
 *
 * <p>Stateless; thread-safe.
 */
final class GroupConfigRouting {

    private GroupConfigRouting() {
    }

    static CompletableFuture<IncrementalAlterConfigsResponse> incrementalAlterConfigs(
            IncrementalAlterConfigsRequest request, short version, TopicAdminHandler topicAdmin,
            ShareGroupConfigHandler groups) {
        IncrementalAlterConfigsRequestData data = request.data();
        IncrementalAlterConfigsRequestData others = new IncrementalAlterConfigsRequestData()
                .setValidateOnly(data.validateOnly());
        IncrementalAlterConfigsResponseData groupResults = new IncrementalAlterConfigsResponseData();
        for (IncrementalAlterConfigsRequestData.AlterConfigsResource resource : data.resources()) {
            if (resource.resourceType() == ConfigResource.Type.GROUP.id()) {
                groupResults.responses().add(groups.alter(resource, data.validateOnly()));
            } else {
                others.resources().add(resource.duplicate());
            }
        }
        if (others.resources().isEmpty()) {
            return CompletableFuture.completedFuture(new IncrementalAlterConfigsResponse(groupResults));
        }
        return topicAdmin.incrementalAlterConfigs(new IncrementalAlterConfigsRequest(others, version), false)
                .thenApply(response -> {
                    IncrementalAlterConfigsResponseData joined = response.data().duplicate();
                    joined.responses().addAll(groupResults.responses());
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
