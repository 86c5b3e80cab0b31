package dev.millrace.broker.group;

import static dev.millrace.broker.group.CoordinatorHarness.REBALANCE_TIMEOUT_MS;
import static dev.millrace.broker.group.CoordinatorHarness.SESSION_TIMEOUT_MS;
import static dev.millrace.broker.group.CoordinatorHarness.bytes;
import static dev.millrace.broker.group.CoordinatorHarness.joinData;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData.JoinGroupResponseMember;
import org.apache.kafka.common.message.LeaveGroupRequestData.MemberIdentity;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(20)
class GroupCoordinatorMembershipTest {

    private static final String GROUP = "orders";

    @TempDir
    Path dir;

    private CoordinatorHarness h;

    @AfterEach
    void tearDown() {
        if (h != null) {
            h.close();
        }
    }

    /** Joins one member into an empty group without initial delay and syncs it; returns its member id. */
    private String stableSingleMember() {
        String member = h.newMemberId(GROUP, "c1");
        JoinGroupResponse joined = h.join(GROUP, member).join();
        assertThat(joined.error()).isEqualTo(Errors.NONE);
        assertThat(h.sync(GROUP, member, joined.data().generationId(), Map.of(member, bytes("all"))).join().error())
                .isEqualTo(Errors.NONE);
        return member;
    }

    /** Two members, stable at generation 2 (the second join rebalanced generation 1). */
    private String[] stableTwoMembers() {
        String a = stableSingleMember();
        String b = h.newMemberId(GROUP, "c2");
        CompletableFuture<JoinGroupResponse> joinB = h.join(GROUP, b);
        assertThat(joinB).isNotDone();
        assertThat(h.heartbeat(GROUP, a, 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        JoinGroupResponse joinA = h.join(GROUP, a).join();
        assertThat(joinA.data().generationId()).isEqualTo(2);
        assertThat(joinB.join().data().generationId()).isEqualTo(2);
        CompletableFuture<SyncGroupResponse> syncB = h.sync(GROUP, b, 2);
        h.sync(GROUP, a, 2, Map.of(a, bytes("a"), b, bytes("b"))).join();
        assertThat(syncB.join().data().assignment()).isEqualTo(bytes("b"));
        return new String[] {a, b};
    }

    @Test
    void shouldRequireMemberIdThenCompleteJoinOfSingleMember() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String member = h.newMemberId(GROUP, "c1");

        JoinGroupResponse joined = h.join(GROUP, member).join();

        assertThat(joined.error()).isEqualTo(Errors.NONE);
        assertThat(joined.data().generationId()).isEqualTo(1);
        assertThat(joined.data().memberId()).isEqualTo(member);
        assertThat(joined.data().leader()).isEqualTo(member);
        assertThat(joined.data().protocolType()).isEqualTo("consumer");
        assertThat(joined.data().protocolName()).isEqualTo("range");
        assertThat(joined.data().members()).extracting(JoinGroupResponseMember::memberId).containsExactly(member);
        assertThat(joined.data().members().get(0).metadata()).isEqualTo(bytes("range-meta"));

        SyncGroupResponse synced = h.sync(GROUP, member, 1, Map.of(member, bytes("p0,p1"))).join();
        assertThat(synced.error()).isEqualTo(Errors.NONE);
        assertThat(synced.data().assignment()).isEqualTo(bytes("p0,p1"));
        assertThat(synced.data().protocolName()).isEqualTo("range");
        assertThat(h.heartbeat(GROUP, member, 1)).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldGiveLeaderAllMetadataAndEveryMemberItsAssignmentWhenThreeJoin() throws IOException {
        h = new CoordinatorHarness(dir, 3, GroupCoordinatorConfig.defaults().withInitialRebalanceDelayMs(3000));
        String[] ids = {h.newMemberId(GROUP, "c1"), h.newMemberId(GROUP, "c2"), h.newMemberId(GROUP, "c3")};
        List<CompletableFuture<JoinGroupResponse>> joins = List.of(h.join(GROUP, ids[0]), h.join(GROUP, ids[1]),
                h.join(GROUP, ids[2]));
        assertThat(joins).noneMatch(CompletableFuture::isDone);

        h.advanceMs(2999);
        assertThat(joins).noneMatch(CompletableFuture::isDone);
        h.advanceMs(1);
        assertThat(joins).as("members arrived during the delay, so it is extended once")
                .noneMatch(CompletableFuture::isDone);
        h.advanceMs(3000);

        List<JoinGroupResponse> responses = joins.stream().map(CompletableFuture::join).toList();
        String leader = responses.get(0).data().leader();
        assertThat(responses).allSatisfy(r -> {
            assertThat(r.error()).isEqualTo(Errors.NONE);
            assertThat(r.data().generationId()).isEqualTo(1);
            assertThat(r.data().leader()).isEqualTo(leader);
        });
        assertThat(responses).filteredOn(JoinGroupResponse::isLeader).singleElement().satisfies(r ->
                assertThat(r.data().members()).extracting(JoinGroupResponseMember::memberId)
                        .containsExactlyInAnyOrder(ids));
        assertThat(responses).filteredOn(r -> !r.isLeader()).hasSize(2)
                .allSatisfy(r -> assertThat(r.data().members()).isEmpty());

        List<CompletableFuture<SyncGroupResponse>> followerSyncs = List.of(ids).stream()
                .filter(id -> !id.equals(leader)).map(id -> h.sync(GROUP, id, 1)).toList();
        assertThat(followerSyncs).noneMatch(CompletableFuture::isDone);
        SyncGroupResponse leaderSync = h.sync(GROUP, leader, 1, Map.of(ids[0], bytes("a0"), ids[1], bytes("a1"),
                ids[2], bytes("a2"))).join();

        assertThat(leaderSync.data().assignment()).isEqualTo(bytes("a" + List.of(ids).indexOf(leader)));
        for (CompletableFuture<SyncGroupResponse> sync : followerSyncs) {
            assertThat(sync.join().error()).isEqualTo(Errors.NONE);
        }
        assertThat(followerSyncs.stream().map(f -> new String(f.join().data().assignment())).toList())
                .containsExactlyInAnyOrderElementsOf(List.of(ids).stream().filter(id -> !id.equals(leader))
                        .map(id -> "a" + List.of(ids).indexOf(id)).toList());
    }

    @Test
    void shouldExtendInitialDelayWhileMembersKeepArrivingButNotBeyondRebalanceTimeout() throws IOException {
        h = new CoordinatorHarness(dir, 1, GroupCoordinatorConfig.defaults().withInitialRebalanceDelayMs(3000));
        CompletableFuture<JoinGroupResponse> first = h.join(GROUP, h.newMemberId(GROUP, "c1"));
        h.advanceMs(2000);
        CompletableFuture<JoinGroupResponse> second = h.join(GROUP, h.newMemberId(GROUP, "c2"));
        h.advanceMs(1000);
        assertThat(first).isNotDone();

        h.advanceMs(3000);

        assertThat(first.join().data().generationId()).isEqualTo(1);
        assertThat(second.join().data().generationId()).isEqualTo(1);
    }

    @Test
    void shouldRebalanceWhenSessionExpires() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String[] ab = stableTwoMembers();

        for (int i = 0; i < 3; i++) {
            h.advanceMs(3000);
            assertThat(h.heartbeat(GROUP, ab[0], 2)).isEqualTo(Errors.NONE);
        }
        h.advanceMs(SESSION_TIMEOUT_MS - 9000);

        assertThat(h.heartbeat(GROUP, ab[0], 2)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        assertThat(h.heartbeat(GROUP, ab[1], 2)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        JoinGroupResponse rejoined = h.join(GROUP, ab[0]).join();
        assertThat(rejoined.data().generationId()).isEqualTo(3);
        assertThat(rejoined.data().members()).extracting(JoinGroupResponseMember::memberId).containsExactly(ab[0]);
    }

    @Test
    void shouldDropMemberThatDoesNotRejoinWithinRebalanceTimeout() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String[] ab = stableTwoMembers();
        CompletableFuture<JoinGroupResponse> rejoinA = h.join(GROUP, ab[0]);
        assertThat(rejoinA).isNotDone();

        for (int elapsed = 0; elapsed < REBALANCE_TIMEOUT_MS - 5000; elapsed += 5000) {
            h.advanceMs(5000);
            assertThat(h.heartbeat(GROUP, ab[1], 2)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        }
        assertThat(rejoinA).isNotDone();
        h.advanceMs(5000);

        JoinGroupResponse joined = rejoinA.join();
        assertThat(joined.data().generationId()).isEqualTo(3);
        assertThat(joined.data().members()).extracting(JoinGroupResponseMember::memberId).containsExactly(ab[0]);
        assertThat(h.heartbeat(GROUP, ab[1], 2)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void shouldRebalanceWhenMemberLeaves() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String[] ab = stableTwoMembers();

        LeaveGroupResponse left = h.leave(GROUP, (short) 5, new MemberIdentity().setMemberId(ab[1])
                .setReason("closing"));

        assertThat(left.topLevelError()).isEqualTo(Errors.NONE);
        assertThat(left.memberResponses()).singleElement().satisfies(m ->
                assertThat(m.errorCode()).isEqualTo(Errors.NONE.code()));
        assertThat(h.heartbeat(GROUP, ab[0], 2)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        JoinGroupResponse rejoined = h.join(GROUP, ab[0]).join();
        assertThat(rejoined.data().generationId()).isEqualTo(3);
        assertThat(rejoined.data().members()).hasSize(1);
    }

    @Test
    void shouldReportLeaveErrorsPerMemberAndAtTopLevelForOldVersions() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String member = stableSingleMember();

        LeaveGroupResponse batch = h.leave(GROUP, (short) 5, new MemberIdentity().setMemberId("ghost"),
                new MemberIdentity().setMemberId(member));
        assertThat(batch.memberResponses()).extracting(m -> Errors.forCode(m.errorCode()))
                .containsExactly(Errors.UNKNOWN_MEMBER_ID, Errors.NONE);

        LeaveGroupResponse old = h.leave(GROUP, (short) 1, new MemberIdentity().setMemberId(member));
        assertThat(old.error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void shouldEmptyGroupAndPersistGenerationWhenLastMemberLeaves() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String member = stableSingleMember();

        h.leave(GROUP, (short) 5, new MemberIdentity().setMemberId(member));

        DescribeGroupsRequest describe = new DescribeGroupsRequest.Builder(new DescribeGroupsRequestData()
                .setGroups(List.of(GROUP))).build((short) 5);
        assertThat(h.coordinator.handleDescribeGroups(describe, (short) 5).join().data().groups().get(0).groupState())
                .isEqualTo("Empty");
        int partition = h.coordinator.partitionFor(GROUP);
        assertThat(h.topic.records(partition)).filteredOn(r -> r instanceof GroupRecord.GroupMetadata)
                .extracting(r -> ((GroupRecord.GroupMetadata) r).value().generationId()).containsExactly(1, 2);
    }

    @Test
    void shouldAnswerHeartbeatErrors() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String member = stableSingleMember();

        assertThat(h.heartbeat("no-such-group", member, 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(h.heartbeat(GROUP, "ghost", 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(h.heartbeat(GROUP, member, 7)).isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(h.heartbeat("", member, 1)).isEqualTo(Errors.INVALID_GROUP_ID);
        assertThat(h.heartbeat(GROUP, member, 1)).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldAcceptHeartbeatWhileCompletingRebalance() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String member = h.newMemberId(GROUP, "c1");
        h.join(GROUP, member).join();

        assertThat(h.heartbeat(GROUP, member, 1)).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldAnswerSyncErrors() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String[] ab = stableTwoMembers();

        assertThat(h.sync(GROUP, ab[0], 1).join().error()).isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(h.sync(GROUP, "ghost", 2).join().error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(h.sync("no-such-group", ab[0], 2).join().error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(h.sync(GROUP, ab[1], 2).join().data().assignment()).isEqualTo(bytes("b"));

        h.join(GROUP, ab[0]);
        assertThat(h.sync(GROUP, ab[1], 2).join().error()).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
    }

    @Test
    void shouldAnswerParkedFollowerSyncWithRebalanceInProgressWhenLeaderNeverSyncs() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String a = h.newMemberId(GROUP, "c1");
        h.join(GROUP, a).join();
        h.sync(GROUP, a, 1, Map.of(a, bytes("x"))).join();
        String b = h.newMemberId(GROUP, "c2");
        CompletableFuture<JoinGroupResponse> joinB = h.join(GROUP, b);
        h.join(GROUP, a).join();
        assertThat(joinB.join().isLeader()).isFalse();
        CompletableFuture<SyncGroupResponse> followerSync = h.sync(GROUP, b, 2);

        for (int elapsed = 0; elapsed < REBALANCE_TIMEOUT_MS - 5000; elapsed += 5000) {
            h.advanceMs(5000);
            assertThat(h.heartbeat(GROUP, a, 2)).as("the leader heartbeats but never syncs").isEqualTo(Errors.NONE);
        }
        assertThat(followerSync).isNotDone();
        h.advanceMs(5000);

        assertThat(followerSync.join().error()).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        assertThat(h.heartbeat(GROUP, a, 2)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        JoinGroupResponse rejoined = h.join(GROUP, b).join();
        assertThat(rejoined.data().leader()).isEqualTo(b);
        assertThat(rejoined.data().generationId()).isEqualTo(3);
    }

    @Test
    void shouldReturnCurrentAssignmentToFollowerRejoiningWithSameProtocols() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String[] ab = stableTwoMembers();

        JoinGroupResponse again = h.join(GROUP, ab[1]).join();

        assertThat(again.data().generationId()).isEqualTo(2);
        assertThat(again.data().members()).isEmpty();
        assertThat(h.heartbeat(GROUP, ab[0], 2)).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldRejectJoinsThatDoNotFit() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        stableSingleMember();

        assertThat(h.join(joinData(GROUP, "", null, "range").setSessionTimeoutMs(10), (short) 9, "c").join().error())
                .isEqualTo(Errors.INVALID_SESSION_TIMEOUT);
        assertThat(h.join(joinData(GROUP, "", null, "sticky").setProtocolType("consumer"), (short) 9, "c").join()
                .error()).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
        assertThat(h.join(joinData(GROUP, "", null, "range").setProtocolType("connect"), (short) 9, "c").join()
                .error()).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
        assertThat(h.join(GROUP, "made-up-id").join().error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(h.join("other-group", "made-up-id").join().error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(h.join(joinData("", "", null, "range"), (short) 9, "c").join().error())
                .isEqualTo(Errors.INVALID_GROUP_ID);
    }

    @Test
    void shouldChooseTheProtocolMostMembersPrefer() throws IOException {
        h = new CoordinatorHarness(dir, 1, GroupCoordinatorConfig.defaults().withInitialRebalanceDelayMs(100));
        String a = h.newMemberId(GROUP, "a");
        String b = h.newMemberId(GROUP, "b");
        String c = h.newMemberId(GROUP, "c");
        CompletableFuture<JoinGroupResponse> joinA = h.join(joinData(GROUP, a, null, "range", "roundrobin"),
                (short) 9, "a");
        h.join(joinData(GROUP, b, null, "roundrobin", "range"), (short) 9, "b");
        h.join(joinData(GROUP, c, null, "roundrobin", "range"), (short) 9, "c");

        h.advanceMs(100);
        h.advanceMs(100);

        assertThat(joinA.join().data().protocolName()).isEqualTo("roundrobin");
    }

    @Test
    void shouldJoinAtOnceWithVersionsBeforeFourAndForStaticMembers() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);

        JoinGroupResponse old = h.join(joinData(GROUP, "", null, "range"), (short) 3, "old").join();
        assertThat(old.error()).isEqualTo(Errors.NONE);
        assertThat(old.data().memberId()).startsWith("old-");

        CompletableFuture<JoinGroupResponse> staticJoin = h.join(joinData("static-group", "", "instance-1", "range"),
                (short) 9, "s");
        assertThat(staticJoin.join().error()).isEqualTo(Errors.NONE);
        assertThat(staticJoin.join().data().memberId()).startsWith("instance-1-");
    }

    @Test
    void shouldFenceTheOldMemberIdWhenStaticMemberRejoins() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String first = h.join(joinData(GROUP, "", "instance-1", "range"), (short) 9, "s").join().data().memberId();
        h.sync(GROUP, first, 1).join();

        JoinGroupResponse second = h.join(joinData(GROUP, "", "instance-1", "range"), (short) 9, "s").join();

        assertThat(second.data().memberId()).isNotEqualTo(first);
        assertThat(second.data().generationId()).isEqualTo(2);
        assertThat(h.heartbeat(GROUP, first, "instance-1", 2)).isEqualTo(Errors.FENCED_INSTANCE_ID);
        assertThat(h.heartbeat(GROUP, second.data().memberId(), "instance-1", 2)).isEqualTo(Errors.NONE);
        LeaveGroupResponse left = h.leave(GROUP, (short) 5, new MemberIdentity().setGroupInstanceId("instance-1"));
        assertThat(left.memberResponses().get(0).errorCode()).isEqualTo(Errors.NONE.code());
    }

    @Test
    void shouldForgetIssuedMemberIdThatIsNeverUsed() throws IOException {
        h = CoordinatorHarness.withoutDelay(dir);
        String a = stableSingleMember();
        String unused = h.newMemberId(GROUP, "c2");
        CompletableFuture<JoinGroupResponse> rejoinA = h.join(GROUP, a);
        assertThat(rejoinA).as("the join phase waits for the issued member id").isNotDone();

        h.advanceMs(SESSION_TIMEOUT_MS);

        assertThat(rejoinA.join().data().generationId()).isEqualTo(2);
        assertThat(rejoinA.join().data().members()).hasSize(1);
        assertThat(h.join(GROUP, unused).join().error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }
}
