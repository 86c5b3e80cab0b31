package dev.millrace.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData.JoinGroupRequestProtocol;
import org.apache.kafka.common.message.JoinGroupRequestData.JoinGroupRequestProtocolCollection;
import org.apache.kafka.common.message.LeaveGroupRequestData.MemberIdentity;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData.OffsetCommitRequestPartition;
import org.apache.kafka.common.message.OffsetCommitRequestData.OffsetCommitRequestTopic;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestGroup;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestTopics;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupRequestData.SyncGroupRequestAssignment;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.SyncGroupResponse;

import dev.millrace.broker.coordinator.ReplicationAwaiter;
import dev.millrace.delay.SystemTimer;

/**
 * A {@link GroupCoordinator} over real logs in a directory, driven by hand: every shard task and
 * every due timer runs on the test thread ({@code Runnable::run} executors, unless {@link #hold} keeps
 * shard tasks back until {@link #runHeld}), and time moves only in {@link #advanceMs}. By default this broker
 * is elected for every partition in epoch 0 at start; {@link #topic} can move an epoch on. Requests are built from the message classes at the latest versions the
 * Kafka 4.x consumer uses unless a test names a version; every response is serialized and parsed
 * back at its version, so a field a version cannot carry fails the test.
 */
final class CoordinatorHarness implements AutoCloseable {

    static final String CONSUMER = "consumer";
    static final int SESSION_TIMEOUT_MS = 10_000;
    static final int REBALANCE_TIMEOUT_MS = 30_000;

    final ManualClock clock = new ManualClock();
    final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    final Map<Uuid, String> topicIds = new LinkedHashMap<>();
    /** Shard tasks kept back while {@link #hold} is set. */
    private final Deque<Runnable> held = new ArrayDeque<>();
    boolean hold;
    ReplicationAwaiter replication = ReplicationAwaiter.IMMEDIATE;
    private final Path dir;
    private final int partitionCount;
    private final GroupCoordinatorConfig config;
    LogBackedOffsetsTopic topic;
    GroupCoordinator coordinator;

    CoordinatorHarness(Path dir, int partitionCount, GroupCoordinatorConfig config) throws IOException {
        this.dir = dir;
        this.partitionCount = partitionCount;
        this.config = config;
        start(true);
    }

    /** A coordinator with Kafka's settings but no initial rebalance delay, as the broker tests use. */
    static CoordinatorHarness withoutDelay(Path dir) throws IOException {
        return new CoordinatorHarness(dir, 3, GroupCoordinatorConfig.defaults().withInitialRebalanceDelayMs(0));
    }

    /** Opens the logs and a coordinator over them; {@code elect}: elected for every partition in epoch 0. */
    void start(boolean elect) throws IOException {
        topic = LogBackedOffsetsTopic.open(dir, partitionCount);
        TopicIds ids = new TopicIds() {
            @Override
            public Optional<String> nameOf(Uuid topicId) {
                return Optional.ofNullable(topicIds.get(topicId));
            }

            @Override
            public Optional<Uuid> idOf(String topicName) {
                return topicIds.entrySet().stream().filter(e -> e.getValue().equals(topicName))
                        .map(Map.Entry::getKey).findFirst();
            }
        };
        coordinator = newCoordinator(ids);
        if (elect) {
            electAll(0);
        }
    }

    /** Another coordinator over the same logs, as a second broker holding the same replica would have. */
    GroupCoordinator newCoordinator(TopicIds ids) {
        return new GroupCoordinator(config, topic, ids, partition -> replication.awaitLogEnd(partition), timer, clock,
                task -> {
                    if (hold) {
                        held.add(task);
                    } else {
                        task.run();
                    }
                });
    }

    /** Tells the coordinator it leads every partition in {@code epoch} and waits for the loads. */
    void electAll(int epoch) {
        for (int p = 0; p < partitionCount; p++) {
            topic.leaderEpoch(p, epoch);
            coordinator.onElected(p, epoch);
        }
        coordinator.awaitLoaded().join();
    }

    /** Runs the shard tasks kept back, and those they queue, until none is left. */
    void runHeld() {
        hold = false;
        Runnable next;
        while ((next = held.poll()) != null) {
            next.run();
        }
    }

    /** Stops the coordinator and closes the logs, then opens both again and reloads. */
    void restart() throws IOException {
        coordinator.close();
        topic.close();
        start(true);
    }

    /** Moves the clock and runs every timer that came due. */
    void advanceMs(long ms) {
        clock.advanceMs(ms);
        try {
            while (timer.advanceClock(0)) {
                // run everything due by now, including timers that due timers added
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Override
    public void close() {
        coordinator.close();
        timer.close();
        topic.close();
    }

    // ---- serialization check

    @SuppressWarnings("unchecked")
    static <T extends AbstractResponse> T roundTrip(ApiKeys api, T response, short version) {
        return (T) AbstractResponse.parseResponse(api, MessageUtil.toByteBufferAccessor(response.data(), version),
                version);
    }

    // ---- JoinGroup

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static JoinGroupRequestData joinData(String groupId, String memberId, String instanceId, String... protocols) {
        JoinGroupRequestProtocolCollection collection = new JoinGroupRequestProtocolCollection();
        for (String protocol : protocols) {
            collection.add(new JoinGroupRequestProtocol().setName(protocol).setMetadata(bytes(protocol + "-meta")));
        }
        return new JoinGroupRequestData()
                .setGroupId(groupId)
                .setMemberId(memberId)
                .setGroupInstanceId(instanceId)
                .setSessionTimeoutMs(SESSION_TIMEOUT_MS)
                .setRebalanceTimeoutMs(REBALANCE_TIMEOUT_MS)
                .setProtocolType(CONSUMER)
                .setProtocols(collection);
    }

    CompletableFuture<JoinGroupResponse> join(JoinGroupRequestData data, short version, String clientId) {
        JoinGroupRequest request = new JoinGroupRequest.Builder(data).build(version);
        return coordinator.handleJoinGroup(request, version, clientId, "/127.0.0.1")
                .thenApply(r -> roundTrip(ApiKeys.JOIN_GROUP, r, version));
    }

    CompletableFuture<JoinGroupResponse> join(String groupId, String memberId) {
        return join(joinData(groupId, memberId, null, "range"), (short) 9, "client");
    }

    /** The first JoinGroup of a v4+ member: answered at once with MEMBER_ID_REQUIRED and the new id. */
    String newMemberId(String groupId, String clientId) {
        JoinGroupResponse response = join(joinData(groupId, "", null, "range"), (short) 9, clientId).join();
        assertThat(response.error()).isEqualTo(Errors.MEMBER_ID_REQUIRED);
        assertThat(response.data().memberId()).startsWith(clientId + "-");
        return response.data().memberId();
    }

    // ---- SyncGroup, Heartbeat, LeaveGroup

    CompletableFuture<SyncGroupResponse> sync(String groupId, String memberId, int generationId,
                                              Map<String, byte[]> assignments) {
        List<SyncGroupRequestAssignment> list = new ArrayList<>();
        assignments.forEach((member, assignment) -> list.add(new SyncGroupRequestAssignment().setMemberId(member)
                .setAssignment(assignment)));
        SyncGroupRequestData data = new SyncGroupRequestData()
                .setGroupId(groupId)
                .setMemberId(memberId)
                .setGenerationId(generationId)
                .setProtocolType(CONSUMER)
                .setProtocolName("range")
                .setAssignments(list);
        return coordinator.handleSyncGroup(new SyncGroupRequest(data, (short) 5))
                .thenApply(r -> roundTrip(ApiKeys.SYNC_GROUP, r, (short) 5));
    }

    CompletableFuture<SyncGroupResponse> sync(String groupId, String memberId, int generationId) {
        return sync(groupId, memberId, generationId, Map.of());
    }

    Errors heartbeat(String groupId, String memberId, int generationId) {
        return heartbeat(groupId, memberId, null, generationId);
    }

    Errors heartbeat(String groupId, String memberId, String instanceId, int generationId) {
        HeartbeatRequestData data = new HeartbeatRequestData().setGroupId(groupId).setMemberId(memberId)
                .setGroupInstanceId(instanceId).setGenerationId(generationId);
        return roundTrip(ApiKeys.HEARTBEAT, coordinator.handleHeartbeat(new HeartbeatRequest.Builder(data)
                .build((short) 4)).join(), (short) 4).error();
    }

    LeaveGroupResponse leave(String groupId, short version, MemberIdentity... members) {
        LeaveGroupRequest request = new LeaveGroupRequest.Builder(groupId, List.of(members)).build(version);
        return roundTrip(ApiKeys.LEAVE_GROUP, coordinator.handleLeaveGroup(request, version).join(), version);
    }

    // ---- offsets

    static OffsetCommitRequestData commitData(String groupId, String memberId, int generationId,
                                              Map<TopicPartition, Long> offsets) {
        Map<String, OffsetCommitRequestTopic> topics = new TreeMap<>();
        Map<TopicPartition, Long> sorted = new TreeMap<>(Comparator.comparing(TopicPartition::toString));
        sorted.putAll(offsets);
        sorted.forEach((tp, offset) -> topics.computeIfAbsent(tp.topic(), t -> new OffsetCommitRequestTopic()
                .setName(t)).partitions().add(new OffsetCommitRequestPartition().setPartitionIndex(tp.partition())
                .setCommittedOffset(offset).setCommittedLeaderEpoch(3).setCommittedMetadata("m" + offset)));
        return new OffsetCommitRequestData()
                .setGroupId(groupId)
                .setMemberId(memberId)
                .setGenerationIdOrMemberEpoch(generationId)
                .setTopics(new ArrayList<>(topics.values()));
    }

    OffsetCommitResponse commit(OffsetCommitRequestData data, short version) {
        OffsetCommitRequest request = new OffsetCommitRequest(data, version);
        return roundTrip(ApiKeys.OFFSET_COMMIT, coordinator.handleOffsetCommit(request, version).join(), version);
    }

    OffsetCommitResponse commit(String groupId, String memberId, int generationId, Map<TopicPartition, Long> offsets) {
        return commit(commitData(groupId, memberId, generationId, offsets), (short) 9);
    }

    /** Every partition error of a commit response, keyed "topic-partition". */
    static Map<String, Errors> errors(OffsetCommitResponse response) {
        Map<String, Errors> out = new LinkedHashMap<>();
        response.data().topics().forEach(t -> t.partitions().forEach(p -> out.put(t.name() + "-" + p.partitionIndex(),
                Errors.forCode(p.errorCode()))));
        return out;
    }

    OffsetFetchResponse fetch(short version, OffsetFetchRequestGroup... groups) {
        OffsetFetchRequestData data = new OffsetFetchRequestData().setGroups(List.of(groups));
        OffsetFetchRequest request = OffsetFetchRequest.Builder.forTopicIdsOrNames(data, false).build(version);
        return roundTrip(ApiKeys.OFFSET_FETCH, coordinator.handleOffsetFetch(request, version).join(), version);
    }

    static OffsetFetchRequestGroup fetchGroup(String groupId, TopicPartition... partitions) {
        Map<String, OffsetFetchRequestTopics> topics = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            topics.computeIfAbsent(tp.topic(), t -> new OffsetFetchRequestTopics().setName(t)).partitionIndexes()
                    .add(tp.partition());
        }
        return new OffsetFetchRequestGroup().setGroupId(groupId).setTopics(new ArrayList<>(topics.values()));
    }

    static OffsetFetchRequestGroup fetchAll(String groupId) {
        return new OffsetFetchRequestGroup().setGroupId(groupId).setTopics(null);
    }

    /** A group of a v8+ OffsetFetch response as "topic-partition" → committed offset. */
    static Map<String, Long> committed(OffsetFetchResponse response, String groupId) {
        Map<String, Long> out = new LinkedHashMap<>();
        response.group(groupId).topics().forEach(t -> t.partitions().forEach(p -> out.put(t.name() + "-"
                + p.partitionIndex(), p.committedOffset())));
        return out;
    }
}
