package dev.millrace.broker.group;

import static dev.millrace.broker.group.CoordinatorHarness.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData.DescribedGroup;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData.ListedGroup;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(20)
class GroupCoordinatorAdminTest {

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
        String member = h.newMemberId(groupId, "client-1");
        JoinGroupResponse joined = h.join(groupId, member).join();
        h.sync(groupId, member, joined.data().generationId(), Map.of(member, bytes("assigned"))).join();
        return member;
    }

    private List<DescribedGroup> describe(short version, String... groupIds) {
        DescribeGroupsRequest request = new DescribeGroupsRequest.Builder(new DescribeGroupsRequestData()
                .setGroups(List.of(groupIds))).build(version);
        return CoordinatorHarness.roundTrip(ApiKeys.DESCRIBE_GROUPS,
                h.coordinator.handleDescribeGroups(request, version).join(), version).data().groups();
    }

    private List<ListedGroup> list(List<String> states, List<String> types) {
        ListGroupsRequest request = new ListGroupsRequest(new ListGroupsRequestData().setStatesFilter(states)
                .setTypesFilter(types), (short) 5);
        return CoordinatorHarness.roundTrip(ApiKeys.LIST_GROUPS, h.coordinator.handleListGroups(request).join(),
                (short) 5).data().groups();
    }

    @Test
    void shouldDescribeStableGroupWithMembersAndUnknownGroupPerVersion() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String member = stableMember("audit");

        List<DescribedGroup> described = describe((short) 6, "audit", "missing");

        DescribedGroup audit = described.get(0);
        assertThat(audit.groupState()).isEqualTo("Stable");
        assertThat(audit.protocolType()).isEqualTo("consumer");
        assertThat(audit.protocolData()).isEqualTo("range");
        assertThat(audit.members()).singleElement().satisfies(m -> {
            assertThat(m.memberId()).isEqualTo(member);
            assertThat(m.clientId()).as("the client id of the join that admitted it").isEqualTo("client");
            assertThat(m.clientHost()).isEqualTo("/127.0.0.1");
            assertThat(m.memberAssignment()).isEqualTo(bytes("assigned"));
            assertThat(m.memberMetadata()).isEqualTo(bytes("range-meta"));
        });
        assertThat(described.get(1).errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
        assertThat(described.get(1).errorMessage()).contains("missing");
        DescribedGroup old = describe((short) 5, "missing").get(0);
        assertThat(old.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(old.groupState()).isEqualTo("Dead");
    }

    @Test
    void shouldListGroupsFilteredByStateAndType() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        stableMember("live");
        h.commit("simple", "", -1, Map.of(new TopicPartition("t", 0), 1L));

        assertThat(list(List.of(), List.of())).extracting(ListedGroup::groupId)
                .containsExactlyInAnyOrder("live", "simple");
        assertThat(list(List.of("stable"), List.of())).singleElement().satisfies(g -> {
            assertThat(g.groupId()).isEqualTo("live");
            assertThat(g.protocolType()).isEqualTo("consumer");
            assertThat(g.groupType()).isEqualTo("classic");
        });
        assertThat(list(List.of("Empty"), List.of("Classic"))).extracting(ListedGroup::groupId)
                .containsExactly("simple");
        assertThat(list(List.of(), List.of("consumer"))).isEmpty();
        assertThat(list(List.of("NoSuchState"), List.of())).isEmpty();
    }

    @Test
    void shouldAnswerLoadInProgressUntilLoaded() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        h.commit("g", "", -1, Map.of(new TopicPartition("t", 0), 1L));
        h.coordinator.close();
        h.topic.close();
        h.start(false);
        HeartbeatRequest heartbeat = new HeartbeatRequest.Builder(new HeartbeatRequestData().setGroupId("g")
                .setMemberId("m").setGenerationId(1)).build((short) 4);
        assertThat(h.coordinator.handleHeartbeat(heartbeat).join().error())
                .as("no partition is led here yet").isEqualTo(Errors.NOT_COORDINATOR);
        h.hold = true;
        h.coordinator.onElected(h.coordinator.partitionFor("g"), 0);

        assertThat(h.coordinator.handleHeartbeat(heartbeat).join().error())
                .isEqualTo(Errors.COORDINATOR_LOAD_IN_PROGRESS);
        h.runHeld();
        assertThat(h.coordinator.handleHeartbeat(heartbeat).join().error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void shouldForgetGroupCreatedOnlyByAnUnusedMemberId() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        h.newMemberId("drive-by", "c");
        assertThat(list(List.of(), List.of())).extracting(ListedGroup::groupId).containsExactly("drive-by");

        h.advanceMs(CoordinatorHarness.SESSION_TIMEOUT_MS);

        assertThat(list(List.of(), List.of())).isEmpty();
    }

    @Test
    void shouldAnswerParkedJoinWithNotCoordinatorOnClose() throws IOException {
        h = new CoordinatorHarness(dir, 1, GroupCoordinatorConfig.defaults());
        CompletableFuture<JoinGroupResponse> parked = h.join("g", h.newMemberId("g", "c"));
        assertThat(parked).isNotDone();

        h.coordinator.close();

        assertThat(parked.join().error()).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(h.heartbeat("g", "m", 1)).isEqualTo(Errors.NOT_COORDINATOR);
    }
}
