package dev.millrace.broker.share;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.DescribeConfigsRequestData.DescribeConfigsResource;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResult;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterConfigsResource;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterableConfig;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DescribeConfigsResponse;

/**
 * IncrementalAlterConfigs and DescribeConfigs for {@code GROUP} config resources, over
 * {@link ShareGroupConfigs}: SET and DELETE are served, APPEND and SUBTRACT are INVALID_REQUEST
 * (no group setting is a list). Errors are per resource.
 *
 * <p>Thread-safe.
 */
public final class ShareGroupConfigHandler {

    private final ShareGroupConfigs configs;

    ShareGroupConfigHandler(ShareGroupConfigs configs) {
        this.configs = configs;
    }

    public AlterConfigsResourceResponse alter(AlterConfigsResource resource, boolean validateOnly) {
        AlterConfigsResourceResponse response = new AlterConfigsResourceResponse()
                .setResourceType(ConfigResource.Type.GROUP.id()).setResourceName(resource.resourceName());
        Map<String, String> set = new HashMap<>();
        List<String> delete = new ArrayList<>();
        for (AlterableConfig c : resource.configs()) {
            if (c.configOperation() == 0) {
                set.put(c.name(), c.value());
            } else if (c.configOperation() == 1) {
                delete.add(c.name());
            } else {
                return response.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Operation "
                        + c.configOperation() + " (APPEND/SUBTRACT) on group config " + c.name()
                        + " is not supported; use SET");
            }
        }
        ApiError error = configs.alter(resource.resourceName(), set, delete, validateOnly);
        return response.setErrorCode(error.error().code()).setErrorMessage(error.message());
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
