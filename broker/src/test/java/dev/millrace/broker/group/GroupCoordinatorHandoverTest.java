package dev.millrace.broker.group;

import static dev.millrace.broker.group.CoordinatorHarness.bytes;
import static dev.millrace.broker.group.CoordinatorHarness.committed;
import static dev.millrace.broker.group.CoordinatorHarness.errors;
import static dev.millrace.broker.group.CoordinatorHarness.fetchAll;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.log.AppendOrigin;

/**
 * Leadership of {@code __consumer_offsets} partitions moving between coordinators: a second coordinator over the
 * same logs stands for the broker that becomes leader (its replica holds what the old leader wrote). The new leader
 * loads what the old one had; the old one refuses at once after resignation, and refuses to append as soon as the
 * partition's leader epoch moved on; answers wait for the in-sync replicas.
 */
@Timeout(20)
class GroupCoordinatorHandoverTest {

    private static final String GROUP = "orders";
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final TopicPartition T1 = new TopicPartition("t", 1);

    @TempDir
    Path dir;

    private CoordinatorHarness h;
    private GroupCoordinator successor;

    @AfterEach
    void tearDown() {
        if (successor != null) {
            successor.close();
        }
        if (h != null) {
            h.close();
        }
    }

    private int partition() {
        return h.coordinator.partitionFor(GROUP);
    }

    /** A member alone in {@link #GROUP}, Stable at the returned generation. */
    private int stableGroup(String member) {
        JoinGroupResponse joined = h.join(GROUP, member).join();
        SyncGroupResponse synced = h.sync(GROUP, member, joined.data().generationId(), Map.of(member,
                bytes("t-0,t-1"))).join();
        assertThat(synced.error()).isEqualTo(Errors.NONE);
        return joined.data().generationId();
    }

    /** The members' ids and the generation of a Stable group of two. */
    private record TwoMembers(String a, String b, int generation) {
    }

    /**
     * A Stable group of a (the leader, with t-0) and b (with t-1), then every partition handed over; {@code h} then
     * talks to the successor.
     */
    private TwoMembers twoMembersHandedOver() throws Exception {
        h = CoordinatorHarness.withoutDelay(dir);
        String a = h.newMemberId(GROUP, "a");
        stableGroup(a);
        String b = h.newMemberId(GROUP, "b");
        CompletableFuture<JoinGroupResponse> joinB = h.join(GROUP, b);
        int generation = h.join(GROUP, a).join().data().generationId();
        assertThat(joinB.join().data().generationId()).isEqualTo(generation);
        CompletableFuture<SyncGroupResponse> syncB = h.sync(GROUP, b, generation);
        h.sync(GROUP, a, generation, Map.of(a, bytes("t-0"), b, bytes("t-1"))).join();
        assertThat(syncB.join().data().assignment()).isEqualTo(bytes("t-1"));
        handOver();
        h.coordinator = successor;
        return new TwoMembers(a, b, generation);
    }

    /** Moves leadership of every partition from {@code h.coordinator} to a new coordinator in epoch 1. */
    private void handOver() {
        for (int p = 0; p < 3; p++) {
            h.coordinator.onResigned(p, 0);
            h.topic.leaderEpoch(p, 1);
        }
        GroupCoordinator old = h.coordinator;
        successor = h.newCoordinator(TopicIds.NONE);
        h.coordinator = successor;
        for (int p = 0; p < 3; p++) {
            successor.onElected(p, 1);
        }
        successor.awaitLoaded().join();
        h.coordinator = old;
    }

    @Test
    void shouldLoadCommittedOffsetsAndGenerationOnTheNewLeader() throws Exception {
        h = CoordinatorHarness.withoutDelay(dir);
        String member = h.newMemberId(GROUP, "c");
        int generation = stableGroup(member);
        assertThat(errors(h.commit(GROUP, member, generation, Map.of(T0, 10L, T1, 20L)))).containsValues(Errors.NONE);
        assertThat(errors(h.commit(GROUP, member, generation, Map.of(T0, 15L)))).containsValues(Errors.NONE);
        h.commit("simple", "", -1, Map.of(T1, 7L));
        Map<String, Long> before = committed(h.fetch((short) 8, fetchAll(GROUP)), GROUP);

        handOver();
        h.coordinator = successor;

        assertThat(committed(h.fetch((short) 8, fetchAll(GROUP)), GROUP)).isEqualTo(before)
                .isEqualTo(Map.of("t-0", 15L, "t-1", 20L));
        assertThat(committed(h.fetch((short) 8, fetchAll("simple")), "simple")).isEqualTo(Map.of("t-1", 7L));
        assertThat(h.heartbeat(GROUP, member, generation)).as("the member goes on in its generation")
                .isEqualTo(Errors.NONE);
        String again = h.newMemberId(GROUP, "c");
        CompletableFuture<JoinGroupResponse> newcomer = h.join(GROUP, again);
        assertThat(h.heartbeat(GROUP, member, generation)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        assertThat(h.join(GROUP, member).join().data().generationId())
                .as("a new member rebalances from the persisted generation").isEqualTo(generation + 1);
        assertThat(newcomer.join().data().generationId()).isEqualTo(generation + 1);
    }

    @Test
    void shouldServeAStableGroupWithItsMembersAndAssignmentsOnTheNewLeader() throws Exception {
        TwoMembers group = twoMembersHandedOver();
        String a = group.a();
        String b = group.b();
        int generation = group.generation();

        assertThat(h.heartbeat(GROUP, a, generation)).isEqualTo(Errors.NONE);
        assertThat(h.heartbeat(GROUP, b, generation)).isEqualTo(Errors.NONE);
        assertThat(h.sync(GROUP, b, generation).join().data().assignment()).as("b's assignment survived the move")
                .isEqualTo(bytes("t-1"));
        assertThat(h.sync(GROUP, a, generation).join().data().assignment()).isEqualTo(bytes("t-0"));
        assertThat(errors(h.commit(GROUP, b, generation, Map.of(T1, 5L)))).containsValues(Errors.NONE);
        JoinGroupResponse rejoined = h.join(GROUP, b).join();
        assertThat(rejoined.error()).isEqualTo(Errors.NONE);
        assertThat(rejoined.data().generationId()).as("a follower rejoining with the same subscription does not "
                + "rebalance").isEqualTo(generation);
        assertThat(rejoined.data().leader()).isEqualTo(a);
    }

    @Test
    void shouldExpireAMemberThatDoesNotComeBackToTheNewLeader() throws Exception {
        TwoMembers group = twoMembersHandedOver();
        String a = group.a();
        String b = group.b();
        int generation = group.generation();
        h.advanceMs(CoordinatorHarness.SESSION_TIMEOUT_MS / 2);
        assertThat(h.heartbeat(GROUP, a, generation)).isEqualTo(Errors.NONE);
        h.advanceMs(CoordinatorHarness.SESSION_TIMEOUT_MS / 2 + 1);

        assertThat(h.heartbeat(GROUP, a, generation)).as("b's session ran out on the new leader: a must rejoin")
                .isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        assertThat(h.heartbeat(GROUP, b, generation)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        JoinGroupResponse alone = h.join(GROUP, a).join();
        assertThat(alone.data().generationId()).isEqualTo(generation + 1);
        assertThat(alone.data().members()).extracting(m -> m.memberId()).containsExactly(a);
    }

    @Test
    void shouldAnswerNotCoordinatorAtOnceAfterResignation() throws Exception {
        h = CoordinatorHarness.withoutDelay(dir);
        String a = h.newMemberId(GROUP, "a");
        int generation = stableGroup(a);
        String b = h.newMemberId(GROUP, "b");
        CompletableFuture<JoinGroupResponse> parkedJoin = h.join(GROUP, b);
        assertThat(parkedJoin).as("waits for member a to rejoin").isNotDone();
        h.hold = true; // nothing the shard queues from here runs until runHeld
        CompletableFuture<OffsetCommitResponse> queued = h.coordinator.handleOffsetCommit(new OffsetCommitRequest(
                CoordinatorHarness.commitData(GROUP, "", -1, Map.of(T0, 1L)), (short) 9), (short) 9);

        h.coordinator.onResigned(partition(), 0);

        assertThat(h.heartbeat(GROUP, a, generation)).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(errors(h.commit(GROUP, a, generation, Map.of(T0, 5L)))).containsValues(Errors.NOT_COORDINATOR);
        assertThat(h.fetch((short) 8, fetchAll(GROUP)).group(GROUP).errorCode())
                .isEqualTo(Errors.NOT_COORDINATOR.code());
        assertThat(h.coordinator.leads(partition())).isFalse();
        h.runHeld();
        assertThat(parkedJoin.join().error()).as("parked requests are answered").isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(errors(queued.join())).as("a request queued before the resignation").containsValues(
                Errors.NOT_COORDINATOR);
        assertThat(h.topic.records(partition())).noneMatch(r -> r instanceof GroupRecord.OffsetCommit o
                && o.value() != null && o.value().offset() == 1L);
    }

    @Test
    void shouldRefuseToAppendOnceTheLeaderEpochMovedOn() throws Exception {
        h = CoordinatorHarness.withoutDelay(dir);
        h.commit(GROUP, "", -1, Map.of(T0, 3L));
        int records = h.topic.records(partition()).size();

        h.topic.leaderEpoch(partition(), 1); // elected elsewhere; this broker has not heard yet

        assertThat(errors(h.commit(GROUP, "", -1, Map.of(T0, 4L)))).containsValues(Errors.NOT_COORDINATOR);
        assertThat(h.topic.records(partition())).hasSize(records);
        assertThat(committed(h.fetch((short) 8, fetchAll(GROUP)), GROUP)).isEqualTo(Map.of("t-0", 3L));
    }

    @Test
    void shouldAnswerOnlyOnceTheReplicasHaveTheAppend() throws Exception {
        h = CoordinatorHarness.withoutDelay(dir);
        CompletableFuture<Void> replicated = new CompletableFuture<>();
        h.replication = p -> replicated;

        CompletableFuture<OffsetCommitResponse> commit = h.coordinator.handleOffsetCommit(new OffsetCommitRequest(
                CoordinatorHarness.commitData(GROUP, "", -1, Map.of(T0, 8L)), (short) 9), (short) 9);

        assertThat(commit).isNotDone();
        assertThat(h.topic.records(partition())).as("appended locally already").isNotEmpty();
        replicated.complete(null);
        assertThat(errors(commit.join())).containsValues(Errors.NONE);
    }

    @Test
    void shouldMapFailedReplicationWaitsToCoordinatorErrors() throws Exception {
        h = CoordinatorHarness.withoutDelay(dir);
        String member = h.newMemberId("other", "c");
        JoinGroupResponse joined = h.join("other", member).join();
        h.replication = p -> CompletableFuture.failedFuture(new NotCoordinatorException("moved"));
        assertThat(errors(h.commit(GROUP, "", -1, Map.of(T0, 1L)))).containsValues(Errors.NOT_COORDINATOR);

        h.replication = p -> CompletableFuture.failedFuture(new CoordinatorNotAvailableException("slow"));
        assertThat(errors(h.commit(GROUP, "", -1, Map.of(T0, 2L)))).containsValues(Errors.COORDINATOR_NOT_AVAILABLE);

        assertThat(h.sync("other", member, joined.data().generationId(), Map.of(member, bytes("x"))).join().error())
                .as("SyncGroup waits for the persisted generation").isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
    }

    @Test
    void shouldApplyATransactionMarkerThatArrivesWhileTheNewLeaderLoads() throws Exception {
        h = CoordinatorHarness.withoutDelay(dir);
        long producerId = 42;
        TxnOffsetCommitRequestData data = new TxnOffsetCommitRequestData().setTransactionalId("tx").setGroupId(GROUP)
                .setProducerId(producerId).setProducerEpoch((short) 0).setGenerationIdOrMemberEpoch(-1)
                .setMemberId("").setTopics(List.of(new TxnOffsetCommitRequestTopic().setName("t").setPartitions(
                        List.of(new TxnOffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(30)
                                .setCommittedLeaderEpoch(-1)))));
        assertThat(h.coordinator.handleTxnOffsetCommit(new TxnOffsetCommitRequest(data, (short) 3)).join().data()
                .topics().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        for (int p = 0; p < 3; p++) {
            h.coordinator.onResigned(p, 0);
            h.topic.leaderEpoch(p, 1);
        }
        successor = h.newCoordinator(TopicIds.NONE);
        h.hold = true;
        successor.onElected(partition(), 1);
        // the transaction coordinator writes the commit marker, then tells the (still loading) group coordinator
        h.topic.log(partition()).appendAsLeader(MemoryRecords.withEndTransactionMarker(0L, producerId, (short) 0,
                new EndTransactionMarker(ControlRecordType.COMMIT, 0)), 1, AppendOrigin.COORDINATOR);
        CompletableFuture<Void> marker = successor.onTransactionMarker(partition(), producerId, true);
        assertThat(h.coordinator.onTransactionMarker(partition(), producerId, true))
                .as("ignored where the partition is not led").isCompleted();

        h.runHeld();

        assertThat(marker).isCompleted();
        h.coordinator = successor;
        assertThat(committed(h.fetch((short) 8, fetchAll(GROUP)), GROUP)).isEqualTo(Map.of("t-0", 30L));
    }
}
