package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.message.AlterClientQuotasRequestData.EntityData;
import org.apache.kafka.common.message.AlterClientQuotasRequestData.EntryData;
import org.apache.kafka.common.message.AlterClientQuotasRequestData.OpData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.requests.ApiError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.controller.MetadataRecord.ClientQuotaRecord;

/** Client quotas in the metadata: the record's layout, the controller's checks, replay and snapshots. */
@Timeout(10)
class ClientQuotaMetadataTest {

    @TempDir
    Path dir;

    private final ClientQuotaControlManager control = new ClientQuotaControlManager();

    @Test
    void shouldRoundTripTheRecordInTheDocumentedLayout() {
        Map<String, String> userDefaultClient = new HashMap<>();
        userDefaultClient.put("user", "alice");
        userDefaultClient.put("client-id", null);
        ClientQuotaRecord set = ClientQuotaRecord.set(userDefaultClient, "producer_byte_rate", 1024);
        ClientQuotaRecord remove = ClientQuotaRecord.remove(Map.of("client-id", "app"), "request_percentage");
        List<MetadataRecord> records = List.of(set, remove);
        assertThat(MetadataRecordSerde.decode(ByteBuffer.wrap(MetadataRecordSerde.encode(records))))
                .isEqualTo(records);

        ByteBuffer buf = ByteBuffer.wrap(MetadataRecordSerde.encode(List.of(set)));
        buf.position(1 + 4);
        assertThat(buf.get()).isEqualTo((byte) 14);
        assertThat(buf.get()).isEqualTo((byte) 0);
        assertThat(buf.getInt()).isEqualTo(4 + (4 + 9) + 4 + (4 + 4) + (4 + 5) + (4 + 18) + 1 + 8);
        assertThat(buf.getInt()).isEqualTo(2);
        assertThat(string(buf)).isEqualTo("client-id"); // sorted by type
        assertThat(buf.getInt()).isEqualTo(-1); // the default client id
        assertThat(string(buf)).isEqualTo("user");
        assertThat(string(buf)).isEqualTo("alice");
        assertThat(string(buf)).isEqualTo("producer_byte_rate");
        assertThat(buf.get()).isEqualTo((byte) 0);
        assertThat(buf.getDouble()).isEqualTo(1024.0);
    }

    @Test
    void shouldRefuseARecordWhoseRemoveFlagIsNeitherZeroNorOne() {
        byte[] bytes = MetadataRecordSerde.encode(List.of(ClientQuotaRecord.set(Map.of("user", "a"), "k", 1)));
        bytes[bytes.length - 9] = 7;
        assertThatThrownBy(() -> MetadataRecordSerde.decode(ByteBuffer.wrap(bytes)))
                .isInstanceOf(MetadataCodecException.class).hasMessageContaining("remove is 7");
    }

    @Test
    void shouldSetChangeAndRemoveQuotasAndKeepThemInSnapshots() throws Exception {
        ControllerResult<List<ApiError>> result = control.handleAlter(MetadataImage.EMPTY, List.of(
                entry(List.of(part("user", "alice")), set("producer_byte_rate", 1024), set("request_percentage", 12.5)),
                entry(List.of(part("user", null), part("client-id", null)), set("consumer_byte_rate", 2048))), false);
        assertThat(result.response()).allMatch(ApiError::isSuccess).hasSize(2);
        MetadataImage image = apply(MetadataImage.EMPTY, result.records());
        ClientQuotaEntity alice = new ClientQuotaEntity(Map.of("user", "alice"));
        Map<String, String> defaults = new HashMap<>();
        defaults.put("user", null);
        defaults.put("client-id", null);
        assertThat(image.clientQuotas()).containsOnlyKeys(alice, new ClientQuotaEntity(defaults));
        assertThat(image.clientQuotas().get(alice)).containsExactlyInAnyOrderEntriesOf(
                Map.of("producer_byte_rate", 1024.0, "request_percentage", 12.5));

        Path file = MetadataSnapshotFile.write(dir, image);
        assertThat(MetadataSnapshotFile.read(file)).isEqualTo(image);

        // removing a key the entity lacks writes nothing; removing the last key drops the entity
        result = control.handleAlter(image, List.of(entry(List.of(part("user", "alice")),
                remove("producer_byte_rate"), remove("request_percentage"), remove("consumer_byte_rate"))), false);
        assertThat(result.response()).containsExactly(ApiError.NONE);
        assertThat(result.records()).hasSize(2);
        image = apply(image, result.records());
        assertThat(image.clientQuotas()).containsOnlyKeys(new ClientQuotaEntity(defaults));

        // validateOnly checks but writes nothing
        result = control.handleAlter(image, List.of(entry(List.of(part("client-id", "app")),
                set("producer_byte_rate", 10))), true);
        assertThat(result.response()).containsExactly(ApiError.NONE);
        assertThat(result.records()).isEmpty();
    }

    @Test
    void shouldRefuseBadEntriesWithInvalidRequestNamingTheProblemAndApplyTheGoodOnes() {
        List<EntryData> entries = List.of(
                entry(List.of(part("user", "a")), set("producer_byte_rate", 10), set("bogus_rate", 1)),
                entry(List.of(part("user", "a")), set("consumer_byte_rate", -5)),
                entry(List.of(part("group", "g")), set("producer_byte_rate", 10)),
                entry(List.of(part("ip", "1.2.3.4")), set("connection_creation_rate", 10)),
                entry(List.of(part("user", "a"), part("user", "b")), set("producer_byte_rate", 10)),
                entry(List.of(), set("producer_byte_rate", 10)),
                entry(List.of(part("user", "")), set("producer_byte_rate", 10)),
                entry(List.of(part("client-id", "c")), set("producer_byte_rate", 10.5)),
                entry(List.of(part("client-id", "c")), set("request_percentage", 0)),
                entry(List.of(part("client-id", "c")), set("request_percentage", 10), set("request_percentage", 20)),
                entry(List.of(part("client-id", "good")), set("request_percentage", 33.3)));
        ControllerResult<List<ApiError>> result = control.handleAlter(MetadataImage.EMPTY, entries, false);
        List<ApiError> errors = result.response();
        assertThat(errors.subList(0, 10)).extracting(ApiError::error).containsOnly(Errors.INVALID_REQUEST);
        assertThat(errors.get(10)).isEqualTo(ApiError.NONE);
        assertThat(errors).extracting(ApiError::message).satisfiesExactly(
                m -> assertThat(m).contains("bogus_rate"),
                m -> assertThat(m).contains("consumer_byte_rate").contains("greater than 0").contains("-5.0"),
                m -> assertThat(m).contains("entity type group"),
                m -> assertThat(m).contains("ip"),
                m -> assertThat(m).contains("user appears twice"),
                m -> assertThat(m).contains("empty"),
                m -> assertThat(m).contains("user name is empty"),
                m -> assertThat(m).contains("whole number").contains("10.5"),
                m -> assertThat(m).contains("request_percentage must be greater than 0"),
                m -> assertThat(m).contains("request_percentage appears twice"),
                m -> assertThat(m).isNull());
        assertThat(result.records()).containsExactly(ClientQuotaRecord.set(Map.of("client-id", "good"),
                "request_percentage", 33.3));
    }

    @Test
    void shouldRefuseToReplayARecordNoControllerWrites() {
        MetadataImageBuilder builder = new MetadataImageBuilder(MetadataImage.EMPTY);
        assertThatThrownBy(() -> builder.replay(ClientQuotaRecord.set(Map.of("group", "g"), "producer_byte_rate",
                1))).isInstanceOf(IllegalStateException.class).hasMessageContaining("user and/or client-id");
        assertThatThrownBy(() -> builder.replay(ClientQuotaRecord.set(Map.of("user", "u"), "producer_byte_rate",
                -1))).isInstanceOf(IllegalStateException.class).hasMessageContaining("positive");
    }

    private static MetadataImage apply(MetadataImage base, List<MetadataRecord> records) {
        MetadataImageBuilder builder = new MetadataImageBuilder(base);
        records.forEach(builder::replay);
        return builder.build(base.appliedIndex() + 1);
    }

    private static String string(ByteBuffer buf) {
        byte[] bytes = new byte[buf.getInt()];
        buf.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static EntityData part(String type, String name) {
        return new EntityData().setEntityType(type).setEntityName(name);
    }

    static OpData set(String key, double value) {
        return new OpData().setKey(key).setValue(value);
    }

    static OpData remove(String key) {
        return new OpData().setKey(key).setRemove(true);
    }

    static EntryData entry(List<EntityData> entity, OpData... ops) {
        return new EntryData().setEntity(new ArrayList<>(entity)).setOps(new ArrayList<>(List.of(ops)));
    }
}
