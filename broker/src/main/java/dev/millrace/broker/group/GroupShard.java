package dev.millrace.broker.group;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Function;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.log.AppendOrigin;
import dev.millrace.broker.log.TxnVerification;

/**
 * The groups of one {@code __consumer_offsets} partition and everything that serves them: the group
 * states, the committed offsets, the partition's log and the handlers of the group APIs. A shard is
 * a single-threaded state machine: every read and change of its state runs as a task on its {@link
 * SerialExecutor}, requests and timer expiries alike, so no lock guards the state and a rebalance
 * never blocks a thread (a JoinGroup or SyncGroup that must wait parks its future in the member).
 *
 * <p>Leadership: a shard exists only while this broker leads its partition, for one leader epoch ({@link
 * #leaderEpoch()}): the {@link GroupCoordinator} creates and {@link #load}s it when the broker is elected, and
 * {@link #resign}s it when the broker stops leading. Every append first checks that the partition is still led here
 * in that epoch and otherwise fails with {@code NOT_COORDINATOR}, so a shard that lost leadership never writes.
 *
 * <p>Persistence: committed offsets and deletions are appended to the partition's log first and
 * applied to memory by {@link #replay} only once the append returned, the same path that {@link
 * #load} uses on startup, so memory never runs ahead of the local log. Group snapshots ({@link
 * GroupRecord.GroupSnapshot}) are appended after each completed rebalance, with the members and assignments of a
 * Stable group; at runtime the live {@link ClassicGroup} is the source of truth and the snapshot only serves the next
 * load, which brings the group back Stable and starts its members' sessions afresh.
 *
 * <p>Answers wait for the in-sync replicas: a response a handler produced goes out only once the partition's high
 * watermark reached the log end as of that moment ({@link dev.millrace.broker.coordinator.ReplicationAwaiter}), so
 * a client never sees a commit, a generation or a deletion that the loss of this broker could undo (as Kafka's
 * coordinators answer after their {@code acks=all} writes). This covers every append made by the request itself and
 * any earlier append whose effect the answer may show. The window: memory is applied as soon as the local log has
 * the append, so between the append and the high watermark other requests of this shard already see the new state
 * (a second OffsetCommit, a SyncGroup of a Stable group); their answers wait too, so no client is told about state
 * that is not on the ISR. If the wait fails (leadership lost: {@code NOT_COORDINATOR}; replicas too slow:
 * {@code COORDINATOR_NOT_AVAILABLE}) the client gets that error and retries; whatever the new leader's log holds is
 * what it serves after loading, and an append that the old leader had alone is truncated away with its effect.
 *
 * <p>Lifecycle: requests before {@link #load} has finished get {@code COORDINATOR_LOAD_IN_PROGRESS};
 * after {@link #close} or {@link #resign} they get {@code NOT_COORDINATOR}, and parked requests are answered with
 * it.
 *
 * <p>Threading: thread-safe entry points ({@link #submit}, {@link #load}, {@link #close}, {@link #resign},
 * {@link #leaderEpoch}, {@link #loading}); every other method must be called on the shard's executor.
 */
final class GroupShard {

    private static final Logger log = LoggerFactory.getLogger(GroupShard.class);
    /** Deletions are appended in batches of about this size, below the default max.message.bytes. */
    private static final int DELETE_BATCH_BYTES = 256 * 1024;

    private final int partition;
    private final int leaderEpoch;
    private final CoordinatorContext context;
    private final SerialExecutor executor;
    private final Map<String, ClassicGroup> groups = new HashMap<>();
    private final OffsetsStore offsets = new OffsetsStore();
    /** Completes when {@link #load} finished (exceptionally if it failed). */
    private final CompletableFuture<Void> loading = new CompletableFuture<>();
    /** Written on the shard's executor, read by {@link #submit} too: a loading shard refuses at once. */
    private volatile boolean loaded;
    private boolean closed;
    /** Set at once by {@link #resign}, before its task runs: no request is served from here after it. */
    private volatile boolean resigned;

    final Rebalancer rebalancer;
    final JoinGroupHandler joinHandler;
    final MembershipHandler membershipHandler;
    final OffsetsHandler offsetsHandler;
    final TxnOffsetsHandler txnOffsetsHandler;
    final GroupAdminHandler adminHandler;

    GroupShard(int partition, int leaderEpoch, CoordinatorContext context, Executor delegate) {
        this.partition = partition;
        this.leaderEpoch = leaderEpoch;
        this.context = context;
        this.executor = new SerialExecutor(delegate, "group shard " + OffsetsTopic.NAME + "-" + partition);
        this.rebalancer = new Rebalancer(this);
        this.joinHandler = new JoinGroupHandler(this, rebalancer);
        this.membershipHandler = new MembershipHandler(this, rebalancer);
        this.offsetsHandler = new OffsetsHandler(this, rebalancer);
        this.txnOffsetsHandler = new TxnOffsetsHandler(this);
        this.adminHandler = new GroupAdminHandler(this);
    }

    int partition() {
        return partition;
    }

    /** The leader epoch of the partition this shard was loaded in and serves. */
    int leaderEpoch() {
        return leaderEpoch;
    }

    GroupCoordinatorConfig config() {
        return context.config();
    }

    TopicIds topicIds() {
        return context.topicIds();
    }

    long nowMs() {
        return context.time().milliseconds();
    }

    Executor executor() {
        return executor;
    }

    // ---- task entry

    /**
     * Runs {@code task} on the shard and returns the future it completes, once the in-sync replicas have what the
     * shard appended until then (see the class comment). If the shard cannot serve (loading, closed, resigned, its
     * executor shut down), the task throws or the wait for the replicas fails, the future completes with {@code
     * onError} applied to the matching error instead.
     */
    <T> CompletableFuture<T> submit(Function<Errors, T> onError, Consumer<CompletableFuture<T>> task) {
        CompletableFuture<T> result = new CompletableFuture<>();
        if (resigned) {
            result.complete(onError.apply(Errors.NOT_COORDINATOR));
            return result;
        }
        if (!loaded) {
            result.complete(onError.apply(Errors.COORDINATOR_LOAD_IN_PROGRESS));
            return result;
        }
        try {
            executor.execute(() -> runTask(result, onError, task));
        } catch (RejectedExecutionException e) {
            result.complete(onError.apply(Errors.COORDINATOR_NOT_AVAILABLE));
        }
        return result;
    }

    private <T> void runTask(CompletableFuture<T> result, Function<Errors, T> onError,
                             Consumer<CompletableFuture<T>> task) {
        if (closed || resigned) {
            result.complete(onError.apply(Errors.NOT_COORDINATOR));
            return;
        }
        if (!loaded) {
            result.complete(onError.apply(Errors.COORDINATOR_LOAD_IN_PROGRESS));
            return;
        }
        CompletableFuture<T> answer = new CompletableFuture<>();
        answer.whenComplete((value, error) -> {
            if (error != null) {
                result.complete(onError.apply(Errors.UNKNOWN_SERVER_ERROR));
            } else {
                afterReplication(value, onError, result);
            }
        });
        try {
            task.accept(answer);
        } catch (ApiException e) {
            answer.complete(onError.apply(Errors.forException(e)));
        } catch (RuntimeException e) {
            log.error("Unexpected error in {}", executor, e);
            answer.complete(onError.apply(Errors.UNKNOWN_SERVER_ERROR));
        }
    }

    /**
     * Completes {@code result} with {@code value} once the partition's high watermark reached its log end as of now
     * (the answer may show anything appended so far), or with the mapped error if that wait fails.
     */
    private <T> void afterReplication(T value, Function<Errors, T> onError, CompletableFuture<T> result) {
        CompletableFuture<Void> replicated;
        try {
            replicated = context.replication().awaitLogEnd(partition);
        } catch (RuntimeException e) {
            replicated = CompletableFuture.failedFuture(e);
        }
        replicated.whenComplete((ignored, error) -> {
            if (error == null) {
                result.complete(value);
            } else {
                Errors mapped = replicationError(error);
                log.debug("An answer of {} waited for the in-sync replicas and failed: {}", executor, mapped);
                result.complete(onError.apply(mapped));
            }
        });
    }

    /** The error a client gets when the wait for the in-sync replicas failed. */
    static Errors replicationError(Throwable e) {
        Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                ? e.getCause() : e;
        if (cause instanceof NotCoordinatorException || cause instanceof NotLeaderOrFollowerException) {
            return Errors.NOT_COORDINATOR;
        }
        return Errors.COORDINATOR_NOT_AVAILABLE;
    }

    /** Schedules {@code action} on this shard after {@code delayMs}; see {@link GroupTimeout}. */
    GroupTimeout schedule(String description, long delayMs, Consumer<GroupTimeout> action) {
        GroupTimeout timeout = new GroupTimeout(description, Math.max(0, delayMs), executor, timer -> {
            if (!closed && !resigned) {
                action.accept(timer);
            }
        });
        context.timer().add(timeout);
        return timeout;
    }

    // ---- groups

    ClassicGroup group(String groupId) {
        return groups.get(groupId);
    }

    Collection<ClassicGroup> groups() {
        return groups.values();
    }

    ClassicGroup createGroup(String groupId) {
        ClassicGroup group = new ClassicGroup(groupId, nowMs());
        groups.put(groupId, group);
        return group;
    }

    /** Forgets a group created for a request that did not end up using it. */
    void maybeRemoveUnusedGroup(ClassicGroup group) {
        if (group.isInState(GroupState.EMPTY) && !group.hasMembers() && group.pendingMemberCount() == 0
                && group.generationId() == 0 && group.protocolType() == null && !offsets.hasOffsets(group.groupId())
                && groups.get(group.groupId()) == group) {
            groups.remove(group.groupId());
        }
    }

    OffsetsStore offsets() {
        return offsets;
    }

    // ---- persistence

    /** Appends {@code records} as one batch, then applies them to memory. */
    void appendAndReplay(List<GroupRecord> records) {
        append(records);
        records.forEach(this::replay);
    }

    /** Appends deletions in batches small enough for the log, applying each batch once written. */
    void appendAndReplayInBatches(List<GroupRecord> records) {
        List<GroupRecord> batch = new ArrayList<>();
        int bytes = 0;
        for (GroupRecord record : records) {
            batch.add(record);
            bytes += GroupRecordSerde.serializeKey(record).length + 64;
            if (bytes >= DELETE_BATCH_BYTES) {
                appendAndReplay(batch);
                batch = new ArrayList<>();
                bytes = 0;
            }
        }
        if (!batch.isEmpty()) {
            appendAndReplay(batch);
        }
    }

    /**
     * Appends transactional offset commits in {@code producerId}'s transaction and holds them as
     * pending until the transaction's marker ({@link #completeTransaction}).
     *
     * @param guard the guard of the transaction's verification, or null (not checked)
     * @throws org.apache.kafka.common.errors.InvalidProducerEpochException if the producer is fenced here
     * @throws org.apache.kafka.common.errors.InvalidTxnStateException if the append would open the producer's
     *         transaction here and a marker of it was written since {@code guard}'s verification started
     */
    void appendTransactional(List<GroupRecord.OffsetCommit> records, long producerId, short producerEpoch,
                             TxnVerification.Guard guard) {
        appendBatch(new ArrayList<>(records), producerId, producerEpoch, guard);
        for (GroupRecord.OffsetCommit record : records) {
            offsets.replayPending(producerId, record);
        }
    }

    /** A transaction marker reached this shard's partition: its pending offsets apply or vanish. */
    void completeTransaction(long producerId, boolean commit) {
        offsets.completeTransaction(producerId, commit);
    }

    /** Appends {@code records} as one batch to this shard's partition; returns once the log has them. */
    void append(List<GroupRecord> records) {
        appendBatch(records, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH, null);
    }

    private void appendBatch(List<GroupRecord> records, long producerId, short producerEpoch,
                             TxnVerification.Guard guard) {
        int currentEpoch = context.offsetsTopic().leaderEpoch(partition); // refuses when not led here
        if (resigned || currentEpoch != leaderEpoch) {
            throw new NotCoordinatorException("The coordinator of " + OffsetsTopic.NAME + "-" + partition
                    + " was loaded in leader epoch " + leaderEpoch + " but the partition is in epoch " + currentEpoch
                    + " now; the group's coordinator moved");
        }
        long nowMs = nowMs();
        List<byte[]> keys = new ArrayList<>(records.size());
        List<byte[]> values = new ArrayList<>(records.size());
        int estimate = 128;
        for (GroupRecord record : records) {
            byte[] key = GroupRecordSerde.serializeKey(record);
            byte[] value = GroupRecordSerde.serializeValue(record);
            keys.add(key);
            values.add(value);
            estimate += key.length + (value == null ? 0 : value.length) + 32;
        }
        boolean transactional = producerId != RecordBatch.NO_PRODUCER_ID;
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(estimate), RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.NONE, TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, producerId, producerEpoch,
                transactional ? 0 : RecordBatch.NO_SEQUENCE, transactional, RecordBatch.NO_PARTITION_LEADER_EPOCH);
        for (int i = 0; i < keys.size(); i++) {
            builder.append(nowMs, keys.get(i), values.get(i));
        }
        context.offsetsTopic().log(partition).appendAsLeader(builder.build(), leaderEpoch, AppendOrigin.COORDINATOR,
                guard);
    }

    /** The error a client gets when an append of this shard failed. */
    static Errors appendError(Throwable e) {
        if (e instanceof RecordTooLargeException || e instanceof RecordBatchTooLargeException) {
            return Errors.INVALID_COMMIT_OFFSET_SIZE;
        }
        if (e instanceof KafkaStorageException) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        if (e instanceof NotLeaderOrFollowerException || e instanceof NotCoordinatorException) {
            return Errors.NOT_COORDINATOR;
        }
        Errors error = Errors.forException(e);
        return error == Errors.UNKNOWN_SERVER_ERROR ? Errors.COORDINATOR_NOT_AVAILABLE : error;
    }

    /**
     * Applies one record of the log to memory. Offsets and tombstones apply as they are; a group
     * snapshot (only replayed while loading) brings its group back at its generation, Stable with its members
     * or Empty ({@link ClassicGroup#restored}).
     */
    void replay(GroupRecord record) {
        if (record instanceof GroupRecord.OffsetCommit offset) {
            offsets.replay(offset);
            return;
        }
        GroupRecord.GroupSnapshot snapshot = ((GroupRecord.GroupMetadata) record).value();
        if (snapshot == null) {
            ClassicGroup removed = groups.remove(record.groupId());
            if (removed != null && !removed.isInState(GroupState.DEAD)) {
                removed.transitionToDead(nowMs());
            }
            return;
        }
        groups.put(record.groupId(), ClassicGroup.restored(record.groupId(), snapshot));
    }

    // ---- lifecycle

    /**
     * Rebuilds the shard from its partition, all of it up to the log end, on the shard's executor; completes when
     * it serves (or failed: it then answers COORDINATOR_LOAD_IN_PROGRESS until it is resigned). Transaction markers
     * in the log are replayed with it; one that {@link #completeTransaction} applies again after the load (it was
     * written while the load was queued) finds nothing pending and changes nothing.
     */
    CompletableFuture<Void> load() {
        CompletableFuture<Void> done = loading;
        try {
            executor.execute(() -> loadNow(done));
        } catch (RejectedExecutionException e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    /** The future of {@link #load}: completes when this shard serves. */
    CompletableFuture<Void> loading() {
        return loading;
    }

    private void loadNow(CompletableFuture<Void> done) {
        if (closed || resigned) {
            done.completeExceptionally(new NotCoordinatorException(OffsetsTopic.NAME + "-" + partition
                    + " was resigned before it loaded"));
            return;
        }
        try {
            long startMs = context.time().hiResClockMs();
            long count = GroupLoader.replay(context.offsetsTopic().log(partition), partition,
                    new GroupLoader.Replayer() {
                        @Override
                        public void record(GroupRecord record, long transactionalProducerId) {
                            if (transactionalProducerId >= 0 && record instanceof GroupRecord.OffsetCommit offset) {
                                offsets.replayPending(transactionalProducerId, offset);
                            } else {
                                replay(record);
                            }
                        }

                        @Override
                        public void marker(long producerId, boolean commit) {
                            offsets.completeTransaction(producerId, commit);
                        }
                    });
            for (String groupId : offsets.groupIds()) {
                groups.computeIfAbsent(groupId, id -> new ClassicGroup(id, nowMs()));
            }
            for (ClassicGroup group : groups.values()) {
                rebalancer.resumeLoaded(group);
            }
            loaded = true;
            log.info("Loaded {} groups from {} records of {}-{} in leader epoch {} in {} ms", groups.size(),
                    count, OffsetsTopic.NAME, partition, leaderEpoch, context.time().hiResClockMs() - startMs);
            done.complete(null);
        } catch (RuntimeException e) {
            log.error("Could not load {}-{} in leader epoch {}: its groups are not served here", OffsetsTopic.NAME,
                    partition, leaderEpoch, e);
            done.completeExceptionally(e);
        }
    }

    /**
     * This broker stopped leading the partition: from now on every request gets NOT_COORDINATOR (also those queued
     * already), then {@link #close} answers the parked ones and cancels the timers.
     */
    CompletableFuture<Void> resign() {
        resigned = true;
        return close();
    }

    /** Stops serving: parked requests get NOT_COORDINATOR and timers are cancelled. */
    CompletableFuture<Void> close() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                closed = true;
                for (ClassicGroup group : groups.values()) {
                    rebalancer.abandon(group, Errors.NOT_COORDINATOR);
                }
                done.complete(null);
            });
        } catch (RejectedExecutionException e) {
            done.complete(null);
        }
        return done;
    }
}
