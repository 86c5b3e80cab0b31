package dev.millrace.broker.quota;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.utils.Time;

/**
 * Measures clients against their quotas ({@link ClientQuotaConfigs}, from the metadata image) and says how long a
 * client over its quota is throttled. One {@link SampledRate} per quota type and measured client (the user and
 * client id parts of the matched entity, see {@link ClientQuotaConfigs.Match}), made on first use and dropped once
 * idle for a whole window ({@link #purgeIdle}). Settings, with Kafka's names: {@code quota.window.num} samples of
 * {@code quota.window.size.seconds} each (11 of 1 s by default); a throttle time is at most the whole window
 * ({@code quota.window.num * quota.window.size.seconds}).
 *
 * <p>With no quota set, {@link #isEnabled} is false and callers skip the rest: the request path then costs one
 * volatile read. Thread-safe: rates are updated under their own lock, the configs are replaced whole.
 */
public final class ClientQuotaManager {

    private final Time time;
    private final int samples;
    private final long windowMs;
    private final long maxThrottleMs;
    private volatile ClientQuotaConfigs configs = ClientQuotaConfigs.EMPTY;
    private final Map<QuotaType, ConcurrentHashMap<ClientKey, SampledRate>> rates = new EnumMap<>(QuotaType.class);

    public ClientQuotaManager(Time time, int samples, long windowMs) {
        if (samples < 2) {
            throw new IllegalArgumentException("quota.window.num must be at least 2, not " + samples);
        }
        if (windowMs <= 0) {
            throw new IllegalArgumentException("the quota window must be positive, not " + windowMs + " ms");
        }
        this.time = time;
        this.samples = samples;
        this.windowMs = windowMs;
        this.maxThrottleMs = samples * windowMs;
        for (QuotaType type : QuotaType.values()) {
            rates.put(type, new ConcurrentHashMap<>());
        }
    }

    /** Applies the quotas of a new metadata image. */
    public void update(Map<ClientQuotaEntity, Map<String, Double>> quotas) {
        configs = new ClientQuotaConfigs(quotas);
    }

    /** Whether any quota is set; when not, nothing needs measuring. */
    public boolean isEnabled() {
        return !configs.isEmpty();
    }

    /** The quota of {@code type} that applies to this client, or null (then nothing is measured for it). */
    public ClientQuotaConfigs.Match find(QuotaType type, String user, String clientId) {
        return configs.find(type, user, clientId == null ? "" : clientId);
    }

    /**
     * Records {@code value} (bytes, or request-thread ms) for the client {@code match} measures and returns how
     * long it must now be throttled, in ms (0 while it is within its quota).
     */
    public long recordAndGetThrottleMs(QuotaType type, ClientQuotaConfigs.Match match, double value) {
        SampledRate rate = rate(type, match);
        long now = time.milliseconds();
        synchronized (rate) {
            rate.record(value, now);
            return rate.throttleMs(type.ratePerSecond(match.quota()), now, maxThrottleMs);
        }
    }

    /** How long the client {@code match} measures must still wait, without recording anything. */
    public long throttleMs(QuotaType type, ClientQuotaConfigs.Match match) {
        SampledRate rate = rates.get(type).get(new ClientKey(match.user(), match.clientId()));
        if (rate == null) {
            return 0;
        }
        synchronized (rate) {
            return rate.throttleMs(type.ratePerSecond(match.quota()), time.milliseconds(), maxThrottleMs);
        }
    }

    /** The measured rate per second of the client {@code match} measures (0 when nothing was recorded). */
    public double ratePerSecond(QuotaType type, ClientQuotaConfigs.Match match) {
        SampledRate rate = rates.get(type).get(new ClientKey(match.user(), match.clientId()));
        if (rate == null) {
            return 0;
        }
        synchronized (rate) {
            return rate.ratePerSecond(time.milliseconds());
        }
    }

    /** The most a throttle time can be: the whole window. */
    public long maxThrottleMs() {
        return maxThrottleMs;
    }

    /** Drops the rates of clients that recorded nothing for a whole window; run now and then. */
    public void purgeIdle() {
        long now = time.milliseconds();
        for (ConcurrentHashMap<ClientKey, SampledRate> byClient : rates.values()) {
            byClient.values().removeIf(rate -> {
                synchronized (rate) {
                    return rate.isIdle(now);
                }
            });
        }
    }

    /** How many clients are being measured (for tests). */
    int measuredClients() {
        return rates.values().stream().mapToInt(Map::size).sum();
    }

    private SampledRate rate(QuotaType type, ClientQuotaConfigs.Match match) {
        return rates.get(type).computeIfAbsent(new ClientKey(match.user(), match.clientId()),
                k -> new SampledRate(samples, windowMs));
    }

    /** Who a rate measures: the user and client id parts of the matched entity, empty when not part of it. */
    private record ClientKey(String user, String clientId) {
    }
}
