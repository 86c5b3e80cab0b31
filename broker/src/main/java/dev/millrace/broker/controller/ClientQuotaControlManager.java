package dev.millrace.broker.controller;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.common.message.AlterClientQuotasRequestData.EntityData;
import org.apache.kafka.common.message.AlterClientQuotasRequestData.EntryData;
import org.apache.kafka.common.message.AlterClientQuotasRequestData.OpData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.requests.ApiError;

import dev.millrace.broker.controller.MetadataRecord.ClientQuotaRecord;

/**
 * Computes the records of Kafka's AlterClientQuotas. Each entry (one entity and its operations) is checked and
 * applied on its own, all or nothing: an entry with one bad operation gets INVALID_REQUEST naming the problem and
 * none of its operations is applied, the other entries are. Checks:
 * <ul>
 *   <li>the entity names {@code user}, {@code client-id} or both, each once, with a non-empty name or null (the
 *       default entity, {@code <default>} in Kafka's tools); {@code ip} (connection-rate quotas) and other types
 *       are refused;
 *   <li>keys are {@link #PRODUCER_BYTE_RATE}, {@link #CONSUMER_BYTE_RATE}, {@link #REQUEST_PERCENTAGE}, each at most
 *       once per entry;
 *   <li>a value to set is finite and greater than 0; byte rates are whole numbers (Kafka declares them as longs).
 * </ul>
 * A removal ({@code remove = true}, Admin's {@code Op(key, null)}) of a key the entity does not have is accepted and
 * writes nothing.
 *
 * <p>Stateless; thread-safe.
 */
final class ClientQuotaControlManager {

    static final String PRODUCER_BYTE_RATE = "producer_byte_rate";
    static final String CONSUMER_BYTE_RATE = "consumer_byte_rate";
    static final String REQUEST_PERCENTAGE = "request_percentage";
    private static final Set<String> KEYS = Set.of(PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE, REQUEST_PERCENTAGE);

    /** The records for {@code entries} (none when {@code validateOnly}) and one result per entry, in order. */
    ControllerResult<List<ApiError>> handleAlter(MetadataImage image, List<EntryData> entries, boolean validateOnly) {
        List<ApiError> results = new ArrayList<>();
        List<MetadataRecord> records = new ArrayList<>();
        for (EntryData entry : entries) {
            List<MetadataRecord> entryRecords = new ArrayList<>();
            ApiError error = alter(image, entry, entryRecords);
            results.add(error);
            if (error.isSuccess() && !validateOnly) {
                records.addAll(entryRecords);
            }
        }
        return new ControllerResult<>(records, results);
    }

    private static ApiError alter(MetadataImage image, EntryData entry, List<MetadataRecord> out) {
        Map<String, String> parts = new TreeMap<>();
        String problem = entity(entry.entity(), parts);
        if (problem != null) {
            return invalid(problem);
        }
        Map<String, Double> current = image.clientQuotas().getOrDefault(new ClientQuotaEntity(parts), Map.of());
        Set<String> seen = new HashSet<>();
        for (OpData op : entry.ops()) {
            String key = op.key();
            if (!KEYS.contains(key)) {
                return invalid("Invalid quota key " + key + "; valid keys: " + PRODUCER_BYTE_RATE + ", "
                        + CONSUMER_BYTE_RATE + ", " + REQUEST_PERCENTAGE);
            }
            if (!seen.add(key)) {
                return invalid("Quota key " + key + " appears twice for one entity");
            }
            if (op.remove()) {
                if (current.containsKey(key)) {
                    out.add(ClientQuotaRecord.remove(parts, key));
                }
                continue;
            }
            problem = value(key, op.value());
            if (problem != null) {
                return invalid(problem);
            }
            out.add(ClientQuotaRecord.set(parts, key, op.value()));
        }
        return ApiError.NONE;
    }

    /** Fills {@code parts} from the request's entity; the problem, or null when the entity is valid. */
    static String entity(List<EntityData> entity, Map<String, String> parts) {
        if (entity.isEmpty()) {
            return "The quota entity is empty; it names user, client-id or both";
        }
        for (EntityData part : entity) {
            String type = part.entityType();
            if (ClientQuotaEntity.IP.equals(type)) {
                return "Entity type ip (connection-rate quotas) is not supported by this broker";
            }
            if (!ClientQuotaEntity.USER.equals(type) && !ClientQuotaEntity.CLIENT_ID.equals(type)) {
                return "Unknown quota entity type " + type + "; valid types: user, client-id";
            }
            if (parts.containsKey(type)) {
                return "Entity type " + type + " appears twice in one entity";
            }
            if (part.entityName() != null && part.entityName().isEmpty()) {
                return "The " + type + " name is empty; the default entity has a null name";
            }
            parts.put(type, part.entityName());
        }
        return null;
    }

    private static String value(String key, double value) {
        if (!Double.isFinite(value) || value <= 0) {
            return "Quota " + key + " must be greater than 0, not " + value;
        }
        if (!key.equals(REQUEST_PERCENTAGE) && (value != Math.rint(value) || value > Long.MAX_VALUE)) {
            return "Quota " + key + " is a whole number of bytes per second, not " + value;
        }
        return null;
    }

    private static ApiError invalid(String message) {
        return new ApiError(Errors.INVALID_REQUEST, message);
    }
}
