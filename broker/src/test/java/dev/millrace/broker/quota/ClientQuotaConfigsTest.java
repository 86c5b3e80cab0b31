package dev.millrace.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.log.ManualTime;
import dev.millrace.broker.quota.ClientQuotaConfigs.Match;

/** Kafka's precedence of quota entities, who shares a measured rate, and the manager on a manual clock. */
@Timeout(10)
class ClientQuotaConfigsTest {

    private static final String PRODUCE = "producer_byte_rate";

    @Test
    void shouldPickTheMostSpecificEntityForEachUserAndClientId() {
        Map<ClientQuotaEntity, Map<String, Double>> quotas = new LinkedHashMap<>();
        quotas.put(entity(null, null, false, true), Map.of(PRODUCE, 8.0)); // client-id <default>
        quotas.put(entity(null, "app", false, true), Map.of(PRODUCE, 7.0)); // client-id app
        quotas.put(entity(null, null, true, false), Map.of(PRODUCE, 6.0, "request_percentage", 50.0)); // <default> user
        quotas.put(entity("bob", null, true, false), Map.of(PRODUCE, 3.0)); // user bob
        quotas.put(entity("bob", null, true, true), Map.of(PRODUCE, 2.0)); // user bob, client-id <default>
        quotas.put(entity("bob", "app", true, true), Map.of(PRODUCE, 1.0)); // user bob, client-id app
        ClientQuotaConfigs configs = new ClientQuotaConfigs(quotas);

        assertThat(configs.find(QuotaType.PRODUCE, "bob", "app")).isEqualTo(new Match(1.0, "bob", "app"));
        assertThat(configs.find(QuotaType.PRODUCE, "bob", "other")).isEqualTo(new Match(2.0, "bob", "other"));
        assertThat(configs.find(QuotaType.PRODUCE, "carol", "app")).isEqualTo(new Match(6.0, "carol", ""));
        assertThat(configs.find(QuotaType.REQUEST, "bob", "app")).isEqualTo(new Match(50.0, "bob", ""));
        assertThat(configs.find(QuotaType.FETCH, "bob", "app")).isNull();

        quotas.put(entity(null, null, true, true), Map.of(PRODUCE, 5.0)); // <default> user, <default> client-id
        configs = new ClientQuotaConfigs(quotas);
        assertThat(configs.find(QuotaType.PRODUCE, "carol", "app")).isEqualTo(new Match(5.0, "carol", "app"));
        quotas.remove(entity(null, null, true, true));
        quotas.remove(entity(null, null, true, false));
        configs = new ClientQuotaConfigs(quotas);
        assertThat(configs.find(QuotaType.PRODUCE, "carol", "app")).isEqualTo(new Match(7.0, "", "app"));
        assertThat(configs.find(QuotaType.PRODUCE, "carol", "x")).isEqualTo(new Match(8.0, "", "x"));
        assertThat(configs.find(QuotaType.REQUEST, "bob", "app")).isNull();

        Map<ClientQuotaEntity, Map<String, Double>> userOnly = new LinkedHashMap<>();
        userOnly.put(entity("bob", null, true, false), Map.of(PRODUCE, 3.0));
        userOnly.put(entity(null, "app", true, true), Map.of(PRODUCE, 4.0)); // <default> user, client-id app
        configs = new ClientQuotaConfigs(userOnly);
        assertThat(configs.find(QuotaType.PRODUCE, "bob", "app")).isEqualTo(new Match(3.0, "bob", ""));
        assertThat(configs.find(QuotaType.PRODUCE, "eve", "app")).isEqualTo(new Match(4.0, "eve", "app"));
        assertThat(configs.find(QuotaType.PRODUCE, "eve", "x")).isNull();
    }

    @Test
    void shouldFindNothingWhenNoQuotaIsSet() {
        assertThat(ClientQuotaConfigs.EMPTY.isEmpty()).isTrue();
        assertThat(new ClientQuotaConfigs(Map.of(entity("bob", null, true, false), Map.of("unknown", 1.0)))
                .isEmpty()).isTrue();
        assertThat(ClientQuotaConfigs.EMPTY.find(QuotaType.PRODUCE, "bob", "app")).isNull();
    }

    @Test
    void shouldShareAUserQuotaBetweenItsClientIdsAndThrottleOnTheManualClock() {
        ManualTime time = new ManualTime(1_000);
        ClientQuotaManager manager = new ClientQuotaManager(time, 11, 1000);
        assertThat(manager.isEnabled()).isFalse();
        manager.update(Map.of(entity("bob", null, true, false), Map.of(PRODUCE, 1000.0)));
        assertThat(manager.isEnabled()).isTrue();
        Match first = manager.find(QuotaType.PRODUCE, "bob", "app-1");
        Match second = manager.find(QuotaType.PRODUCE, "bob", "app-2");
        assertThat(manager.recordAndGetThrottleMs(QuotaType.PRODUCE, first, 500)).isEqualTo(500);
        assertThat(manager.recordAndGetThrottleMs(QuotaType.PRODUCE, second, 500)).isEqualTo(1000);
        time.advance(400);
        assertThat(manager.throttleMs(QuotaType.PRODUCE, first)).isEqualTo(600);
        time.advance(600);
        assertThat(manager.throttleMs(QuotaType.PRODUCE, second)).isZero();
        assertThat(manager.measuredClients()).isEqualTo(1);
        time.advance(11_000);
        manager.purgeIdle();
        assertThat(manager.measuredClients()).isZero();
        assertThat(manager.maxThrottleMs()).isEqualTo(11_000);
    }

    @Test
    void shouldMeasureRequestTimeAsAPercentageOfOneThread() {
        ManualTime time = new ManualTime(0);
        ClientQuotaManager manager = new ClientQuotaManager(time, 11, 1000);
        manager.update(Map.of(entity(null, "app", false, true), Map.of("request_percentage", 10.0)));
        Match match = manager.find(QuotaType.REQUEST, "ANONYMOUS", "app");
        // 10 % of a thread is 100 ms per second: 50 ms of handler time is paid back in 500 ms
        assertThat(manager.recordAndGetThrottleMs(QuotaType.REQUEST, match, 50)).isEqualTo(500);
    }

    static ClientQuotaEntity entity(String user, String clientId, boolean hasUser, boolean hasClientId) {
        Map<String, String> parts = new HashMap<>();
        if (hasUser) {
            parts.put(ClientQuotaEntity.USER, user);
        }
        if (hasClientId) {
            parts.put(ClientQuotaEntity.CLIENT_ID, clientId);
        }
        return new ClientQuotaEntity(parts);
    }
}
