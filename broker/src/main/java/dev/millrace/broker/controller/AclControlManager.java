package dev.millrace.broker.controller;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;

import dev.millrace.broker.controller.Controller.AclDeletion;
import dev.millrace.broker.controller.MetadataRecord.AclRecord;
import dev.millrace.broker.controller.MetadataRecord.RemoveAclRecord;

/**
 * Computes the records of Kafka's CreateAcls and DeleteAcls. A creation is checked, with INVALID_REQUEST naming
 * the field, for: a concrete resource type (TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER), a
 * LITERAL or PREFIXED pattern with a non-empty name (a CLUSTER resource is {@code kafka-cluster}), a concrete
 * operation and permission (ALLOW, DENY), a principal {@code Type:name} and a non-empty host. A binding that
 * exists already, or twice in one request, is answered NONE and written once. A deletion filter removes every
 * binding it matches (kafka-clients' {@link AclBindingFilter#matches}), each once even when two filters match it.
 *
 * <p>Stateless; thread-safe.
 */
final class AclControlManager {

    ControllerResult<List<ApiError>> handleCreate(MetadataImage image, List<AclBinding> creations) {
        List<ApiError> results = new ArrayList<>();
        Set<AclBinding> added = new LinkedHashSet<>();
        List<MetadataRecord> records = new ArrayList<>();
        for (AclBinding binding : creations) {
            ApiError error = check(binding);
            results.add(error);
            if (error.isSuccess() && !image.acls().contains(binding) && added.add(binding)) {
                records.add(AclRecord.of(binding));
            }
        }
        return new ControllerResult<>(records, results);
    }

    ControllerResult<List<AclDeletion>> handleDelete(MetadataImage image, List<AclBindingFilter> filters) {
        List<AclDeletion> results = new ArrayList<>();
        Set<AclBinding> removed = new LinkedHashSet<>();
        for (AclBindingFilter filter : filters) {
            String problem = filter.findIndefiniteField();
            if (filter.isUnknown()) {
                results.add(new AclDeletion(new ApiError(Errors.INVALID_REQUEST,
                        "The filter has an unknown field: " + problem), List.of()));
                continue;
            }
            List<AclBinding> deleted = new ArrayList<>();
            for (AclBinding binding : image.acls()) {
                if (filter.matches(binding)) {
                    deleted.add(binding);
                    removed.add(binding);
                }
            }
            results.add(new AclDeletion(ApiError.NONE, deleted));
        }
        List<MetadataRecord> records = new ArrayList<>();
        removed.forEach(binding -> records.add(new RemoveAclRecord(AclRecord.of(binding))));
        return new ControllerResult<>(records, results);
    }

    static ApiError check(AclBinding binding) {
        ResourceType type = binding.pattern().resourceType();
        if (type == ResourceType.ANY || type == ResourceType.UNKNOWN) {
            return invalid("resource type " + type + " is not a concrete resource type");
        }
        PatternType pattern = binding.pattern().patternType();
        if (pattern != PatternType.LITERAL && pattern != PatternType.PREFIXED) {
            return invalid("pattern type " + pattern + " is neither LITERAL nor PREFIXED");
        }
        String name = binding.pattern().name();
        if (name == null || name.isEmpty()) {
            return invalid("the resource name is empty");
        }
        if (type == ResourceType.CLUSTER && !name.equals("kafka-cluster")) {
            return invalid("a CLUSTER resource is named kafka-cluster, not " + name);
        }
        AclOperation operation = binding.entry().operation();
        if (operation == AclOperation.ANY || operation == AclOperation.UNKNOWN) {
            return invalid("operation " + operation + " is not a concrete operation");
        }
        AclPermissionType permission = binding.entry().permissionType();
        if (permission != AclPermissionType.ALLOW && permission != AclPermissionType.DENY) {
            return invalid("permission " + permission + " is neither ALLOW nor DENY");
        }
        String host = binding.entry().host();
        if (host == null || host.isEmpty()) {
            return invalid("the host is empty (* means any host)");
        }
        String principal = binding.entry().principal();
        int colon = principal == null ? -1 : principal.indexOf(':');
        if (colon <= 0 || colon == principal.length() - 1) {
            return invalid("principal " + principal + " is not of the form Type:name");
        }
        return ApiError.NONE;
    }

    private static ApiError invalid(String problem) {
        return new ApiError(Errors.INVALID_REQUEST, "Invalid ACL binding: " + problem);
    }
}
