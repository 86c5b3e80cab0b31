package dev.millrace.broker.quota;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.quota.ClientQuotaEntity;

/**
 * The client quotas in force, indexed for the lookup of one (user, client id), with Kafka's precedence: for each
 * quota type on its own, the most specific entity that sets it wins:
 * <pre>
 *   1. user U, client-id C            5. default user, default client-id
 *   2. user U, default client-id      6. default user
 *   3. user U                         7. client-id C
 *   4. default user, client-id C      8. default client-id
 * </pre>
 * Which entity matched also says who shares the measured rate ({@link Match#user}, {@link Match#clientId}): a quota
 * on a user alone (3, 6) is shared by all of that user's client ids, a quota naming a client id, or a default one,
 * is measured per client id, and a quota on client ids alone (7, 8) is shared by all users of the client id. A
 * default entity gives every user (client id) its own measurement at the default quota.
 *
 * <p>Immutable; thread-safe. A lookup that finds no quota allocates nothing.
 */
public final class ClientQuotaConfigs {

    public static final ClientQuotaConfigs EMPTY = new ClientQuotaConfigs(Map.of());

    private final Level noUser = new Level();
    private final Level defaultUser = new Level();
    private final Map<String, Level> users = new HashMap<>();
    private final boolean empty;

    /** {@code quotas} as in the metadata image: entity, then key to value; unknown keys are ignored. */
    public ClientQuotaConfigs(Map<ClientQuotaEntity, Map<String, Double>> quotas) {
        boolean any = false;
        for (Map.Entry<ClientQuotaEntity, Map<String, Double>> e : quotas.entrySet()) {
            Map<String, String> entity = e.getKey().entries();
            Level level;
            if (!entity.containsKey(ClientQuotaEntity.USER)) {
                level = noUser;
            } else if (entity.get(ClientQuotaEntity.USER) == null) {
                level = defaultUser;
            } else {
                level = users.computeIfAbsent(entity.get(ClientQuotaEntity.USER), u -> new Level());
            }
            double[] values;
            if (!entity.containsKey(ClientQuotaEntity.CLIENT_ID)) {
                values = level.noClient;
            } else if (entity.get(ClientQuotaEntity.CLIENT_ID) == null) {
                values = level.defaultClient;
            } else {
                values = level.clients.computeIfAbsent(entity.get(ClientQuotaEntity.CLIENT_ID), c -> unset());
            }
            for (Map.Entry<String, Double> quota : e.getValue().entrySet()) {
                QuotaType type = QuotaType.forKey(quota.getKey());
                if (type != null) {
                    values[type.ordinal()] = quota.getValue();
                    any = true;
                }
            }
        }
        this.empty = !any;
    }

    /** Whether no quota of any type is set. */
    public boolean isEmpty() {
        return empty;
    }

    /** The quota of {@code type} that applies to {@code user} and {@code clientId}, or null when none does. */
    public Match find(QuotaType type, String user, String clientId) {
        if (empty) {
            return null;
        }
        int t = type.ordinal();
        Level level = users.get(user);
        if (level != null) {
            Match match = level.find(t, clientId, user);
            if (match != null) {
                return match;
            }
        }
        Match match = defaultUser.find(t, clientId, user);
        return match != null ? match : noUser.find(t, clientId, "");
    }

    private static double[] unset() {
        double[] values = new double[QuotaType.values().length];
        java.util.Arrays.fill(values, Double.NaN);
        return values;
    }

    /**
     * The quota that applies and the client it is measured for: {@code user} and {@code clientId} are the
     * request's or empty when the matched entity does not name (or default) that part.
     */
    public record Match(double quota, String user, String clientId) {
    }

    /** The quotas of one user part (a user, the default user, or none): by client id, default client id, none. */
    private static final class Level {
        final Map<String, double[]> clients = new HashMap<>();
        final double[] defaultClient = unset();
        final double[] noClient = unset();

        Match find(int type, String clientId, String sensorUser) {
            double[] exact = clients.get(clientId);
            if (exact != null && !Double.isNaN(exact[type])) {
                return new Match(exact[type], sensorUser, clientId);
            }
            if (!Double.isNaN(defaultClient[type])) {
                return new Match(defaultClient[type], sensorUser, clientId);
            }
            if (!sensorUser.isEmpty() && !Double.isNaN(noClient[type])) {
                return new Match(noClient[type], sensorUser, "");
            }
            return null;
        }
    }
}
