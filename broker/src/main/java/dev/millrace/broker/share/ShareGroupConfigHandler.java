package dev.millrace.broker.share;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.DescribeConfigsRequestData.DescribeConfigsResource;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResult;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeConfigsResponse;

/**
 * DescribeConfigs for {@code GROUP} config resources, from {@link ShareGroupConfigs} (the settings of this broker's
 * metadata image): every known setting, with the group's value (source GROUP_CONFIG) or the broker's default. Changes
 * go to the controller ({@code server/GroupConfigRouting}). Errors are per resource.
 *
 * <p>Thread-safe.
 */
public final class ShareGroupConfigHandler {

    private final ShareGroupConfigs configs;

    ShareGroupConfigHandler(ShareGroupConfigs configs) {
        this.configs = configs;
    }

    public DescribeConfigsResult describe(DescribeConfigsResource resource) {
        DescribeConfigsResult result = new DescribeConfigsResult().setResourceType(ConfigResource.Type.GROUP.id())
                .setResourceName(resource.resourceName());
        if (resource.resourceName() == null || resource.resourceName().isEmpty()) {
            return result.setErrorCode(Errors.INVALID_GROUP_ID.code()).setErrorMessage("The group id must not be empty");
        }
        List<String> keys = resource.configurationKeys();
        for (Map.Entry<String, Optional<String>> e : configs.describe(resource.resourceName()).entrySet()) {
            if (keys != null && !keys.isEmpty() && !keys.contains(e.getKey())) {
                continue;
            }
            boolean set = e.getValue().isPresent();
            result.configs().add(new DescribeConfigsResourceResult().setName(e.getKey())
                    .setValue(e.getValue().orElse(configs.defaultValue(e.getKey())))
                    .setReadOnly(false)
                    .setConfigSource(set ? DescribeConfigsResponse.ConfigSource.GROUP_CONFIG.id()
                            : DescribeConfigsResponse.ConfigSource.DEFAULT_CONFIG.id())
                    .setIsSensitive(false)
                    .setDocumentation(ShareGroupConfigs.documentation(e.getKey())));
        }
        return result;
    }
}
