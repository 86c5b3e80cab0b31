package dev.millrace.broker.server;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.message.AlterClientQuotasRequestData.EntryData;
import org.apache.kafka.common.message.AlterClientQuotasResponseData;
import org.apache.kafka.common.message.DescribeClientQuotasRequestData.ComponentData;
import org.apache.kafka.common.message.DescribeClientQuotasResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.requests.AlterClientQuotasRequest;
import org.apache.kafka.common.requests.AlterClientQuotasResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DescribeClientQuotasRequest;
import org.apache.kafka.common.requests.DescribeClientQuotasResponse;

import dev.millrace.broker.cluster.ControllerClient;
import dev.millrace.broker.controller.Controller;

/**
 * The Admin API of client quotas. AlterClientQuotas goes to the active controller (through the
 * {@link ControllerClient}, or straight to the local controller when another node forwarded it), which checks each
 * entry and commits it to the metadata log; the response has one entry per request entry, in order, with the
 * entity as sent. DescribeClientQuotas answers from this broker's metadata image with the entities the filter
 * matches and their quotas: per component, the entity has that type and its name is the given one
 * ({@code MATCH_TYPE_EXACT}; a null name is the default entity), null ({@code MATCH_TYPE_DEFAULT}) or not null
 * ({@code MATCH_TYPE_SPECIFIED}); with {@code strict} the entity has no other type. A filter naming an entity type
 * other than user and client-id, a type twice, or an unknown match type answers INVALID_REQUEST.
 *
 * <p>Thread-safe; called on request threads.
 */
final class ClientQuotaAdminHandler {

    private final Controller controller;
    private final ControllerClient controllerClient;

    ClientQuotaAdminHandler(Controller controller, ControllerClient controllerClient) {
        this.controller = controller;
        this.controllerClient = controllerClient;
    }

    CompletableFuture<AlterClientQuotasResponse> alter(AlterClientQuotasRequest request, boolean forwarded) {
        List<EntryData> entries = request.data().entries();
        boolean validateOnly = request.validateOnly();
        CompletableFuture<List<ApiError>> results = forwarded ? controller.alterClientQuotas(entries, validateOnly)
                : controllerClient.alterClientQuotas(entries, validateOnly);
        return results.thenApply(errors -> {
            AlterClientQuotasResponseData data = new AlterClientQuotasResponseData();
            for (int i = 0; i < entries.size(); i++) {
                AlterClientQuotasResponseData.EntryData entry = new AlterClientQuotasResponseData.EntryData()
                        .setErrorCode(errors.get(i).error().code()).setErrorMessage(errors.get(i).message());
                entries.get(i).entity().forEach(part -> entry.entity().add(
                        new AlterClientQuotasResponseData.EntityData().setEntityType(part.entityType())
                                .setEntityName(part.entityName())));
                data.entries().add(entry);
            }
            return new AlterClientQuotasResponse(data);
        });
    }

    DescribeClientQuotasResponse describe(DescribeClientQuotasRequest request) {
        List<ComponentData> components = request.data().components();
        String problem = checkFilter(components);
        if (problem != null) {
            return new DescribeClientQuotasResponse(new DescribeClientQuotasResponseData()
                    .setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(problem).setEntries(null));
        }
        Map<ClientQuotaEntity, Map<String, Double>> matching = new LinkedHashMap<>();
        controller.image().clientQuotas().forEach((entity, quotas) -> {
            if (matches(entity.entries(), components, request.data().strict())) {
                matching.put(entity, quotas);
            }
        });
        return DescribeClientQuotasResponse.fromQuotaEntities(matching, 0);
    }

    private static String checkFilter(List<ComponentData> components) {
        Set<String> types = new HashSet<>();
        for (ComponentData component : components) {
            String type = component.entityType();
            if (!ClientQuotaEntity.USER.equals(type) && !ClientQuotaEntity.CLIENT_ID.equals(type)) {
                return "Unknown quota entity type " + type + " in the filter; valid types: user, client-id";
            }
            if (!types.add(type)) {
                return "Entity type " + type + " appears twice in the filter";
            }
            byte match = component.matchType();
            if (match != DescribeClientQuotasRequest.MATCH_TYPE_EXACT
                    && match != DescribeClientQuotasRequest.MATCH_TYPE_DEFAULT
                    && match != DescribeClientQuotasRequest.MATCH_TYPE_SPECIFIED) {
                return "Unknown match type " + match + " for entity type " + type;
            }
        }
        return null;
    }

    static boolean matches(Map<String, String> entity, List<ComponentData> components, boolean strict) {
        if (strict && entity.size() != components.size()) {
            return false;
        }
        for (ComponentData component : components) {
            if (!entity.containsKey(component.entityType())) {
                return false;
            }
            String name = entity.get(component.entityType());
            boolean ok = switch (component.matchType()) {
                case DescribeClientQuotasRequest.MATCH_TYPE_EXACT -> Objects.equals(name, component.match());
                case DescribeClientQuotasRequest.MATCH_TYPE_DEFAULT -> name == null;
                default -> name != null;
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }
}
