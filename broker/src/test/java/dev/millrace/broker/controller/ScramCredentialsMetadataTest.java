package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData.ScramCredentialDeletion;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData.ScramCredentialUpsertion;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.controller.MetadataRecord.RemoveUserScramCredentialRecord;
import dev.millrace.broker.controller.MetadataRecord.UserScramCredentialRecord;

/** SCRAM credentials in the metadata: the records' layout, replay, snapshots, and the controller's checks. */
@Timeout(10)
class ScramCredentialsMetadataTest {

    private static final byte SHA256 = ScramMechanism.SCRAM_SHA_256.type();
    private static final byte SHA512 = ScramMechanism.SCRAM_SHA_512.type();

    @TempDir
    Path dir;

    private final ScramControlManager control = new ScramControlManager();

    @Test
    void shouldRoundTripBothRecordsAndWriteTheDocumentedLayout() {
        List<MetadataRecord> records = List.of(new UserScramCredentialRecord("alice-é", SHA512, bytes("salt"),
                bytes("stored"), bytes("server"), 8192), new RemoveUserScramCredentialRecord("bob", SHA256));
        byte[] encoded = MetadataRecordSerde.encode(records);
        assertThat(MetadataRecordSerde.decode(ByteBuffer.wrap(encoded))).isEqualTo(records);

        ByteBuffer buf = ByteBuffer.wrap(MetadataRecordSerde.encode(List.of(records.get(0))));
        buf.position(1 + 4);
        assertThat(buf.get()).isEqualTo((byte) 10);
        assertThat(buf.get()).isEqualTo((byte) 0);
        int length = buf.getInt();
        assertThat(length).isEqualTo(4 + "alice-é".getBytes(StandardCharsets.UTF_8).length + 1 + (4 + 4) + (4 + 6)
                + (4 + 6) + 4);
        assertThat(buf.getInt()).isEqualTo("alice-é".getBytes(StandardCharsets.UTF_8).length);
    }

    @Test
    void shouldRoundTripABrokerRegistrationWithListenersAtVersionOneAndWithoutAtVersionZero() {
        org.apache.kafka.common.Uuid id = org.apache.kafka.common.Uuid.randomUuid();
        MetadataRecord.BrokerRegistrationRecord withListeners = new MetadataRecord.BrokerRegistrationRecord(2, id, 9,
                "10.0.0.2", 9092, null, Map.of("SSL", new ListenerEndpoint("b2.example", 9093),
                "PLAINTEXT", new ListenerEndpoint("10.0.0.2", 9092)));
        MetadataRecord.BrokerRegistrationRecord without = new MetadataRecord.BrokerRegistrationRecord(3, id, 10,
                "10.0.0.3", 9092, "r");
        byte[] encoded = MetadataRecordSerde.encode(List.of(withListeners, without));
        assertThat(MetadataRecordSerde.decode(ByteBuffer.wrap(encoded))).containsExactly(withListeners, without);
        assertThat(encoded[1 + 4 + 1]).isEqualTo((byte) 1);
        MetadataImageBuilder builder = new MetadataImageBuilder(MetadataImage.EMPTY);
        builder.replay(withListeners);
        MetadataImage image = builder.build(1);
        assertThat(image.brokers().get(2).endpoint("SSL")).isEqualTo(new ListenerEndpoint("b2.example", 9093));
        assertThat(image.brokers().get(2).endpoint("OTHER")).isEqualTo(new ListenerEndpoint("10.0.0.2", 9092));
    }

    @Test
    void shouldDeriveKeysThatAuthenticateThePasswordAndNeverStoreIt() throws Exception {
        ScramFormatter formatter = new ScramFormatter(ScramMechanism.SCRAM_SHA_512);
        byte[] salt = formatter.secureRandomBytes();
        byte[] salted = formatter.saltedPassword("alice-secret", salt, 4096);
        MetadataImage image = apply(MetadataImage.EMPTY, control.handleAlter(MetadataImage.EMPTY,
                new AlterUserScramCredentialsRequestData().setUpsertions(List.of(new ScramCredentialUpsertion()
                        .setName("alice").setMechanism(SHA512).setIterations(4096).setSalt(salt)
                        .setSaltedPassword(salted)))));

        ScramCredential stored = image.scramCredential("alice", ScramMechanism.SCRAM_SHA_512).orElseThrow();
        assertThat(stored.storedKey()).isEqualTo(formatter.storedKey(formatter.clientKey(salted)));
        assertThat(stored.serverKey()).isEqualTo(formatter.serverKey(salted));
        assertThat(stored.salt()).isEqualTo(salt);
        assertThat(stored.storedKey()).isNotEqualTo(salted);
        assertThat(image.scramCredential("alice", ScramMechanism.SCRAM_SHA_256)).isEmpty();
    }

    @Test
    void shouldReplaceAndDeleteCredentialsAndKeepThemInSnapshots() throws Exception {
        MetadataImage image = apply(MetadataImage.EMPTY, control.handleAlter(MetadataImage.EMPTY, upsert("alice",
                SHA256, 4096)));
        image = apply(image, control.handleAlter(image, upsert("alice", SHA256, 8192).setUpsertions(List.of(
                upsertion("alice", SHA256, 8192), upsertion("alice", SHA512, 4096)))));
        assertThat(image.scramCredentials().get("alice")).containsOnlyKeys("SCRAM-SHA-256", "SCRAM-SHA-512");
        assertThat(image.scramCredential("alice", ScramMechanism.SCRAM_SHA_256).orElseThrow().iterations())
                .isEqualTo(8192);

        Path file = MetadataSnapshotFile.write(dir, image);
        assertThat(MetadataSnapshotFile.read(file)).isEqualTo(image);

        image = apply(image, control.handleAlter(image, new AlterUserScramCredentialsRequestData().setDeletions(
                List.of(new ScramCredentialDeletion().setName("alice").setMechanism(SHA256),
                        new ScramCredentialDeletion().setName("alice").setMechanism(SHA512)))));
        assertThat(image.scramCredentials()).isEmpty();
    }

    @Test
    void shouldRefuseBadAlterationsPerUserWithKafkasErrors() {
        MetadataImage image = apply(MetadataImage.EMPTY, control.handleAlter(MetadataImage.EMPTY, upsert("alice",
                SHA256, 4096)));
        AlterUserScramCredentialsRequestData request = new AlterUserScramCredentialsRequestData()
                .setDeletions(List.of(new ScramCredentialDeletion().setName("ghost").setMechanism(SHA256),
                        new ScramCredentialDeletion().setName("").setMechanism(SHA256)))
                .setUpsertions(List.of(upsertion("few", SHA256, 100), upsertion("many", SHA512, 1_000_000),
                        upsertion("odd", (byte) 9, 4096), upsertion("twice", SHA256, 4096),
                        upsertion("twice", SHA256, 8192), upsertion("bob", SHA512, 4096),
                        upsertion("alice", SHA512, 4096), upsertion("alice", SHA256, 5)));
        ControllerResult<Map<String, ApiError>> result = control.handleAlter(image, request);

        assertThat(result.response()).extractingFromEntries(Map.Entry::getKey, e -> e.getValue().error())
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple("ghost", Errors.RESOURCE_NOT_FOUND),
                        org.assertj.core.groups.Tuple.tuple("", Errors.UNACCEPTABLE_CREDENTIAL),
                        org.assertj.core.groups.Tuple.tuple("few", Errors.UNACCEPTABLE_CREDENTIAL),
                        org.assertj.core.groups.Tuple.tuple("many", Errors.UNACCEPTABLE_CREDENTIAL),
                        org.assertj.core.groups.Tuple.tuple("odd", Errors.UNSUPPORTED_SASL_MECHANISM),
                        org.assertj.core.groups.Tuple.tuple("twice", Errors.DUPLICATE_RESOURCE),
                        org.assertj.core.groups.Tuple.tuple("bob", Errors.NONE),
                        org.assertj.core.groups.Tuple.tuple("alice", Errors.UNACCEPTABLE_CREDENTIAL));
        // only bob's credential is written: alice's valid SHA-512 upsertion goes with her bad SHA-256 one
        assertThat(result.records()).singleElement().satisfies(r ->
                assertThat(((UserScramCredentialRecord) r).user()).isEqualTo("bob"));
    }

    @Test
    void shouldRefuseToReplayTheDeletionOfACredentialThatDoesNotExist() {
        MetadataImageBuilder builder = new MetadataImageBuilder(MetadataImage.EMPTY);
        assertThatThrownBy(() -> builder.replay(new RemoveUserScramCredentialRecord("ghost", SHA256)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("ghost");
    }

    private static MetadataImage apply(MetadataImage base, ControllerResult<Map<String, ApiError>> result) {
        assertThat(result.response().values()).allMatch(ApiError::isSuccess);
        MetadataImageBuilder builder = new MetadataImageBuilder(base);
        result.records().forEach(builder::replay);
        return builder.build(base.appliedIndex() + 1);
    }

    private static AlterUserScramCredentialsRequestData upsert(String user, byte mechanism, int iterations) {
        return new AlterUserScramCredentialsRequestData().setUpsertions(List.of(upsertion(user, mechanism,
                iterations)));
    }

    private static ScramCredentialUpsertion upsertion(String user, byte mechanism, int iterations) {
        return new ScramCredentialUpsertion().setName(user).setMechanism(mechanism).setIterations(iterations)
                .setSalt(bytes("salt-" + user)).setSaltedPassword(bytes("salted-password-of-" + user));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
