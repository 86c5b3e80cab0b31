package dev.millrace.broker.group;

import static dev.millrace.broker.group.CoordinatorHarness.bytes;
import static dev.millrace.broker.group.CoordinatorHarness.commitData;
import static dev.millrace.broker.group.CoordinatorHarness.committed;
import static dev.millrace.broker.group.CoordinatorHarness.errors;
import static dev.millrace.broker.group.CoordinatorHarness.fetchAll;
import static dev.millrace.broker.group.CoordinatorHarness.fetchGroup;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData.DescribedGroup;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestGroup;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestTopics;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponsePartitions;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(20)
class GroupCoordinatorOffsetsTest {

    private static final String GROUP = "billing";
    private static final TopicPartition T0 = new TopicPartition("payments", 0);
    private static final TopicPartition T1 = new TopicPartition("payments", 1);
    private static final TopicPartition U0 = new TopicPartition("refunds", 0);

    @TempDir
    Path dir;

    private CoordinatorHarness h;

    @AfterEach
    void tearDown() {
        if (h != null) {
            h.close();
        }
    }

    private String stableMember(String groupId) {
        String member = h.newMemberId(groupId, "c1");
        JoinGroupResponse joined = h.join(groupId, member).join();
        h.sync(groupId, member, joined.data().generationId(), Map.of(member, bytes("all"))).join();
        return member;
    }

    private DescribedGroup describe(String groupId) {
        DescribeGroupsRequest request = new DescribeGroupsRequest.Builder(new DescribeGroupsRequestData()
                .setGroups(List.of(groupId))).build((short) 6);
        return h.coordinator.handleDescribeGroups(request, (short) 6).join().data().groups().get(0);
    }

    private DeleteGroupsResponse delete(String... groupIds) {
        DeleteGroupsRequest request = new DeleteGroupsRequest(new DeleteGroupsRequestData()
                .setGroupsNames(List.of(groupIds)), (short) 3);
        return CoordinatorHarness.roundTrip(ApiKeys.DELETE_GROUPS,
                h.coordinator.handleDeleteGroups(request, (short) 3).join(), (short) 3);
    }

    @Test
    void shouldCommitAndFetchOffsetsOfMember() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String member = stableMember(GROUP);

        OffsetCommitResponse response = h.commit(GROUP, member, 1, Map.of(T0, 10L, T1, 20L, U0, 5L));

        assertThat(errors(response)).containsOnly(entry("payments-0", Errors.NONE), entry("payments-1", Errors.NONE),
                entry("refunds-0", Errors.NONE));
        OffsetFetchResponse fetched = h.fetch((short) 9, fetchGroup(GROUP, T0, T1, U0,
                new TopicPartition("payments", 9)));
        assertThat(fetched.group(GROUP).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(committed(fetched, GROUP)).containsExactly(entry("payments-0", 10L), entry("payments-1", 20L),
                entry("payments-9", -1L), entry("refunds-0", 5L));
        OffsetFetchResponsePartitions p0 = fetched.group(GROUP).topics().get(0).partitions().get(0);
        assertThat(p0.metadata()).isEqualTo("m10");
        assertThat(p0.committedLeaderEpoch()).isEqualTo(3);
    }

    @Test
    void shouldFetchAllOffsetsAndSeveralGroupsAtOnce() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        h.commit("g1", "", -1, Map.of(T0, 1L, U0, 2L));
        h.commit("g2", "", -1, Map.of(T1, 3L));

        OffsetFetchResponse fetched = h.fetch((short) 8, fetchAll("g1"), fetchGroup("g2", T1), fetchAll("unknown"));

        assertThat(committed(fetched, "g1")).containsOnly(entry("payments-0", 1L), entry("refunds-0", 2L));
        assertThat(committed(fetched, "g2")).containsOnly(entry("payments-1", 3L));
        assertThat(committed(fetched, "unknown")).isEmpty();
    }

    @Test
    void shouldAnswerSingleGroupFormOfOldVersions() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        h.commit(commitData(GROUP, "", -1, Map.of(T0, 42L)), (short) 2);

        OffsetFetchResponse v7 = h.fetch((short) 7, fetchGroup(GROUP, T0, T1));
        assertThat(v7.data().topics()).singleElement().satisfies(t -> {
            assertThat(t.name()).isEqualTo("payments");
            assertThat(t.partitions()).extracting(p -> p.committedOffset()).containsExactly(42L, -1L);
        });
        OffsetFetchResponse v1 = h.fetch((short) 1, fetchGroup(GROUP, T0));
        assertThat(v1.data().topics().get(0).partitions().get(0).committedOffset()).isEqualTo(42L);
        OffsetFetchResponse all = h.fetch((short) 3, fetchAll(GROUP));
        assertThat(all.data().topics()).hasSize(1);
        assertThat(all.data().errorCode()).isEqualTo(Errors.NONE.code());
    }

    @Test
    void shouldAcceptSimpleCommitsOnlyWhileGroupIsEmpty() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        assertThat(errors(h.commit("simple", "", -1, Map.of(T0, 7L)))).containsOnly(entry("payments-0", Errors.NONE));
        assertThat(describe("simple").groupState()).isEqualTo("Empty");

        stableMember(GROUP);
        assertThat(errors(h.commit(GROUP, "", -1, Map.of(T0, 7L))))
                .containsOnly(entry("payments-0", Errors.UNKNOWN_MEMBER_ID));
    }

    @Test
    void shouldRejectCommitsWithWrongGenerationOrMember() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String member = stableMember(GROUP);

        assertThat(errors(h.commit(GROUP, member, 5, Map.of(T0, 1L)))).containsOnly(
                entry("payments-0", Errors.ILLEGAL_GENERATION));
        assertThat(errors(h.commit(GROUP, "ghost", 1, Map.of(T0, 1L)))).containsOnly(
                entry("payments-0", Errors.UNKNOWN_MEMBER_ID));
        assertThat(errors(h.commit("nobody", member, 1, Map.of(T0, 1L)))).containsOnly(
                entry("payments-0", Errors.GROUP_ID_NOT_FOUND));
        assertThat(errors(h.commit(commitData("nobody", member, 1, Map.of(T0, 1L)), (short) 8))).containsOnly(
                entry("payments-0", Errors.ILLEGAL_GENERATION));
        assertThat(committed(h.fetch((short) 9, fetchGroup(GROUP, T0)), GROUP)).containsOnly(entry("payments-0", -1L));
    }

    @Test
    void shouldRejectCommitWhileCompletingRebalanceAndOversizedMetadata() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String member = h.newMemberId(GROUP, "c1");
        h.join(GROUP, member).join();
        assertThat(errors(h.commit(GROUP, member, 1, Map.of(T0, 1L)))).containsOnly(
                entry("payments-0", Errors.REBALANCE_IN_PROGRESS));
        h.sync(GROUP, member, 1).join();

        OffsetCommitRequestData data = commitData(GROUP, member, 1, Map.of(T0, 1L, T1, 2L));
        data.topics().get(0).partitions().get(0).setCommittedMetadata("x".repeat(4097));
        assertThat(errors(h.commit(data, (short) 9))).containsOnly(entry("payments-0",
                Errors.OFFSET_METADATA_TOO_LARGE), entry("payments-1", Errors.NONE));
    }

    @Test
    void shouldCommitAndFetchByTopicIdFromVersionTen() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        Uuid payments = Uuid.randomUuid();
        Uuid unknown = Uuid.randomUuid();
        h.topicIds.put(payments, "payments");
        OffsetCommitRequestData data = commitData(GROUP, "", -1, Map.of(T0, 11L, U0, 12L));
        data.topics().get(0).setTopicId(payments);
        data.topics().get(1).setTopicId(unknown);

        OffsetCommitResponse response = h.commit(data, (short) 10);

        assertThat(response.data().topics()).extracting(t -> t.topicId()).containsExactly(payments, unknown);
        assertThat(response.data().topics()).extracting(t -> t.partitions().get(0).errorCode())
                .containsExactly(Errors.NONE.code(), Errors.UNKNOWN_TOPIC_ID.code());
        OffsetFetchRequestGroup byId = new OffsetFetchRequestGroup().setGroupId(GROUP).setTopics(List.of(
                new OffsetFetchRequestTopics().setTopicId(payments).setPartitionIndexes(List.of(0)),
                new OffsetFetchRequestTopics().setTopicId(unknown).setPartitionIndexes(List.of(0))));
        OffsetFetchResponse fetched = h.fetch((short) 10, byId);
        assertThat(fetched.group(GROUP).topics().get(0).partitions().get(0).committedOffset()).isEqualTo(11L);
        assertThat(fetched.group(GROUP).topics().get(1).partitions().get(0).errorCode())
                .isEqualTo(Errors.UNKNOWN_TOPIC_ID.code());
        OffsetFetchResponse all = h.fetch((short) 10, fetchAll(GROUP));
        assertThat(all.group(GROUP).topics()).singleElement().satisfies(t -> assertThat(t.topicId())
                .isEqualTo(payments));
    }

    @Test
    void shouldKeepOffsetsAndGroupAcrossRestart() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String member = stableMember(GROUP);
        h.commit(GROUP, member, 1, Map.of(T0, 100L, T1, 200L));
        h.commit(GROUP, member, 1, Map.of(T0, 150L));
        h.commit("simple", "", -1, Map.of(U0, 9L));

        h.restart();

        assertThat(committed(h.fetch((short) 9, fetchGroup(GROUP, T0, T1)), GROUP))
                .containsOnly(entry("payments-0", 150L), entry("payments-1", 200L));
        assertThat(committed(h.fetch((short) 9, fetchAll("simple")), "simple")).containsOnly(entry("refunds-0", 9L));
        DescribedGroup described = describe(GROUP);
        assertThat(described.groupState()).isEqualTo("Stable");
        assertThat(described.protocolType()).isEqualTo("consumer");
        assertThat(described.members()).singleElement().satisfies(m -> assertThat(m.memberId()).isEqualTo(member));
        assertThat(h.heartbeat(GROUP, member, 1)).as("the member goes on in its generation").isEqualTo(Errors.NONE);

        h.advanceMs(CoordinatorHarness.SESSION_TIMEOUT_MS + 1);

        assertThat(describe(GROUP).groupState()).as("a member that sends nothing more expires").isEqualTo("Empty");
        String again = h.newMemberId(GROUP, "c1");
        assertThat(h.join(GROUP, again).join().data().generationId()).isEqualTo(3);
    }

    @Test
    void shouldWriteTombstonesWhenDeletingGroup() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        h.commit(GROUP, "", -1, Map.of(T0, 1L, U0, 2L));
        int partition = h.coordinator.partitionFor(GROUP);

        DeleteGroupsResponse response = delete(GROUP, "never-existed");

        assertThat(response.get(GROUP)).isEqualTo(Errors.NONE);
        assertThat(response.get("never-existed")).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(h.topic.records(partition)).filteredOn(r -> r.groupId().equals(GROUP) && r.isTombstone())
                .containsExactlyInAnyOrder(new GroupRecord.OffsetCommit(GROUP, T0, null),
                        new GroupRecord.OffsetCommit(GROUP, U0, null), new GroupRecord.GroupMetadata(GROUP, null));
        assertThat(committed(h.fetch((short) 9, fetchGroup(GROUP, T0)), GROUP)).containsOnly(entry("payments-0", -1L));
        assertThat(describe(GROUP).errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());

        h.restart();
        assertThat(describe(GROUP).errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
        assertThat(committed(h.fetch((short) 9, fetchAll(GROUP)), GROUP)).isEmpty();
    }

    @Test
    void shouldRefuseToDeleteGroupWithMembers() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        stableMember(GROUP);

        DeleteGroupsResponse response = delete(GROUP);

        assertThat(response.get(GROUP)).isEqualTo(Errors.NON_EMPTY_GROUP);
        assertThat(response.data().results().find(GROUP).errorMessage()).contains(GROUP, "Stable");
    }

    @Test
    void shouldAnswerCoordinatorNotAvailableWhenAppendFails() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        h.topic.log(h.coordinator.partitionFor(GROUP)).close();

        assertThat(errors(h.commit(GROUP, "", -1, Map.of(T0, 1L)))).containsOnly(
                entry("payments-0", Errors.COORDINATOR_NOT_AVAILABLE));
    }
}
