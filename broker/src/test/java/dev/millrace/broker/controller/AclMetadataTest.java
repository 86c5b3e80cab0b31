package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;

import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.controller.Controller.AclDeletion;
import dev.millrace.broker.controller.MetadataRecord.AclRecord;
import dev.millrace.broker.controller.MetadataRecord.RemoveAclRecord;

/** ACL bindings in the metadata: the records' layout, the controller's checks, replay and snapshots. */
@Timeout(10)
class AclMetadataTest {

    private static final AclBinding ALICE_READS_ORDERS = binding(ResourceType.TOPIC, "orders", PatternType.LITERAL,
            "User:alice", AclOperation.READ, AclPermissionType.ALLOW);
    private static final AclBinding BOB_DENIED_PREFIX = binding(ResourceType.GROUP, "app-", PatternType.PREFIXED,
            "User:bob", AclOperation.ALL, AclPermissionType.DENY);

    @TempDir
    Path dir;

    private final AclControlManager control = new AclControlManager();

    @Test
    void shouldRoundTripBothRecordsInTheDocumentedLayout() {
        AclRecord acl = AclRecord.of(BOB_DENIED_PREFIX);
        List<MetadataRecord> records = List.of(acl, new RemoveAclRecord(AclRecord.of(ALICE_READS_ORDERS)));
        assertThat(MetadataRecordSerde.decode(ByteBuffer.wrap(MetadataRecordSerde.encode(records))))
                .isEqualTo(records);
        ByteBuffer buf = ByteBuffer.wrap(MetadataRecordSerde.encode(List.of(acl)));
        buf.position(1 + 4);
        assertThat(buf.get()).isEqualTo((byte) 12);
        assertThat(buf.get()).isEqualTo((byte) 0);
        assertThat(buf.getInt()).isEqualTo(1 + (4 + 4) + 1 + (4 + 8) + (4 + 1) + 1 + 1);
        assertThat(buf.get()).isEqualTo(ResourceType.GROUP.code());
        assertThat(acl.toBinding()).isEqualTo(BOB_DENIED_PREFIX);
    }

    @Test
    void shouldCreateEachBindingOnceDeleteByFilterAndKeepThemInSnapshots() throws Exception {
        ControllerResult<List<ApiError>> created = control.handleCreate(MetadataImage.EMPTY,
                List.of(ALICE_READS_ORDERS, BOB_DENIED_PREFIX, ALICE_READS_ORDERS));
        assertThat(created.response()).allMatch(ApiError::isSuccess).hasSize(3);
        assertThat(created.records()).hasSize(2);
        MetadataImage image = apply(MetadataImage.EMPTY, created.records());
        assertThat(image.acls()).containsExactly(ALICE_READS_ORDERS, BOB_DENIED_PREFIX);
        assertThat(control.handleCreate(image, List.of(ALICE_READS_ORDERS)).records()).isEmpty();

        Path file = MetadataSnapshotFile.write(dir, image);
        assertThat(MetadataSnapshotFile.read(file)).isEqualTo(image);

        AclBindingFilter bobs = new AclBindingFilter(ResourcePatternFilter.ANY, new AccessControlEntryFilter(
                "User:bob", null, AclOperation.ANY, AclPermissionType.ANY));
        ControllerResult<List<AclDeletion>> deleted = control.handleDelete(image, List.of(bobs, bobs));
        assertThat(deleted.response()).extracting(AclDeletion::deleted)
                .containsExactly(List.of(BOB_DENIED_PREFIX), List.of(BOB_DENIED_PREFIX));
        assertThat(deleted.records()).hasSize(1);
        image = apply(image, deleted.records());
        assertThat(image.acls()).containsExactly(ALICE_READS_ORDERS);
    }

    @Test
    void shouldRefuseBindingsThatCannotBeEnforcedNamingTheProblem() {
        List<AclBinding> bad = List.of(
                binding(ResourceType.UNKNOWN, "x", PatternType.LITERAL, "User:a", AclOperation.READ,
                        AclPermissionType.ALLOW),
                binding(ResourceType.TOPIC, "", PatternType.LITERAL, "User:a", AclOperation.READ,
                        AclPermissionType.ALLOW),
                binding(ResourceType.TOPIC, "x", PatternType.LITERAL, "alice", AclOperation.READ,
                        AclPermissionType.ALLOW),
                binding(ResourceType.CLUSTER, "c", PatternType.LITERAL, "User:a", AclOperation.ALTER,
                        AclPermissionType.ALLOW));
        ControllerResult<List<ApiError>> result = control.handleCreate(MetadataImage.EMPTY, bad);
        assertThat(result.records()).isEmpty();
        assertThat(result.response()).extracting(ApiError::error).containsOnly(Errors.INVALID_REQUEST);
        assertThat(result.response()).extracting(ApiError::message).satisfiesExactly(
                m -> assertThat(m).contains("resource type UNKNOWN"),
                m -> assertThat(m).contains("resource name is empty"),
                m -> assertThat(m).contains("principal alice"),
                m -> assertThat(m).contains("kafka-cluster"));
    }

    private static MetadataImage apply(MetadataImage base, List<MetadataRecord> records) {
        MetadataImageBuilder builder = new MetadataImageBuilder(base);
        records.forEach(builder::replay);
        return builder.build(base.appliedIndex() + 1);
    }

    static AclBinding binding(ResourceType type, String name, PatternType pattern, String principal,
                              AclOperation operation, AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
                new AccessControlEntry(principal, "*", operation, permission));
    }
}
