package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.AlterShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestPartition;
import org.apache.kafka.common.message.AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic;
import org.apache.kafka.common.message.AlterShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponsePartition;
import org.apache.kafka.common.message.AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopic;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponsePartition;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsResponse;
import org.apache.kafka.common.requests.DeleteShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DeleteShareGroupOffsetsResponse;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsResponse;

import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.share.ShareGroupAdmin;

/**
 * The share-group offset admin APIs on a cluster. A share-partition lives on the leader of its topic-partition
 * ({@code SharePartitionManager}), but {@code Admin} sends these calls to the group's coordinator, which leads only
 * some of them. So the broker that receives a call answers it in two steps:
 *
 * <ol>
 *   <li>here, with {@link ShareGroupAdmin}, which checks the group (INVALID_GROUP_ID, GROUP_ID_NOT_FOUND,
 *       NON_EMPTY_GROUP: this broker is the group's membership coordinator) and serves the share-partitions led here;
 *       the others come back NOT_LEADER_OR_FOLLOWER;</li>
 *   <li>for those, the same request, cut down to the partitions each leader leads (as the metadata names them now),
 *       goes to that leader ({@link BrokerRequestSender}, marked as forwarded), which serves them as in step 1 without
 *       the group checks and without passing anything on; its answers replace the NOT_LEADER_OR_FOLLOWER ones.</li>
 * </ol>
 *
 * Partitions still NOT_LEADER_OR_FOLLOWER or LEADER_NOT_AVAILABLE (leadership moved meanwhile, a leader not reachable)
 * are tried again every {@value #RETRY_BACKOFF_MS} ms with fresh metadata for up to {@code timeoutMs}; then they keep
 * that error, which the client may retry. DeleteShareGroupOffsets forgets the saved state here (the share-state
 * coordinator serves the whole cluster) and is passed on to every other broker that leads a partition of a named
 * topic, so that it drops the share-partitions it holds in memory; a broker that cannot be reached within
 * {@code timeoutMs} turns into that topic's error; DeleteGroups of a share group is passed on alike
 * ({@link #dropElsewhere}). AlterShareGroupOffsets and DescribeShareGroupOffsets are served by
 * each share-partition's leader, so the start offset moves (and its in-flight state goes) where the records are
 * delivered.
 *
 * <p>Thread-safe; called on request threads; futures complete on the sender's thread or a delay thread.
 */
final class ShareOffsetsRouting {

    static final long RETRY_BACKOFF_MS = 100;

    private final int nodeId;
    private final Supplier<MetadataImage> metadata;
    private final ShareGroupAdmin admin;
    private final BrokerRequestSender sender;
    private final long timeoutMs;

    ShareOffsetsRouting(int nodeId, Supplier<MetadataImage> metadata, ShareGroupAdmin admin, BrokerRequestSender sender,
                        long timeoutMs) {
        this.nodeId = nodeId;
        this.metadata = metadata;
        this.admin = admin;
        this.sender = sender;
        this.timeoutMs = timeoutMs;
    }

    CompletableFuture<AlterShareGroupOffsetsResponse> alter(AlterShareGroupOffsetsRequestData request, short version,
                                                            boolean forwarded) {
        if (forwarded) {
            return CompletableFuture.completedFuture(new AlterShareGroupOffsetsResponse(
                    admin.alterOffsets(request, false)));
        }
        AlterShareGroupOffsetsResponseData local = admin.alterOffsets(request, true);
        if (local.errorCode() != Errors.NONE.code()) {
            return CompletableFuture.completedFuture(new AlterShareGroupOffsetsResponse(local));
        }
        Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        request.topics().forEach(t -> t.partitions().forEach(p -> offsets.put(
                new TopicPartition(t.topicName(), p.partitionIndex()), p.startOffset())));
        Map<TopicPartition, AlterShareGroupOffsetsResponsePartition> answers = new LinkedHashMap<>();
        local.responses().forEach(t -> t.partitions().forEach(p -> answers.put(
                new TopicPartition(t.topicName(), p.partitionIndex()), p)));
        String groupId = request.groupId();
        PartitionApi<AlterShareGroupOffsetsResponsePartition> api = new PartitionApi<>() {
            @Override
            public Map<TopicPartition, AlterShareGroupOffsetsResponsePartition> local(Set<TopicPartition> tps) {
                return alterAnswers(admin.alterOffsets(alterRequest(groupId, offsets, tps), false));
            }

            @Override
            public CompletableFuture<Map<TopicPartition, AlterShareGroupOffsetsResponsePartition>> remote(
                    int leader, Set<TopicPartition> tps) {
                return sender.<AlterShareGroupOffsetsResponse>send(leader, new AlterShareGroupOffsetsRequest.Builder(
                        alterRequest(groupId, offsets, tps)), version).thenApply(r -> {
                            throwIfFailed(r.data().errorCode(), r.data().errorMessage());
                            return alterAnswers(r.data());
                        });
            }

            @Override
            public short errorOf(AlterShareGroupOffsetsResponsePartition answer) {
                return answer.errorCode();
            }

            @Override
            public AlterShareGroupOffsetsResponsePartition failed(TopicPartition tp, Errors error, String message) {
                return new AlterShareGroupOffsetsResponsePartition().setPartitionIndex(tp.partition())
                        .setErrorCode(error.code()).setErrorMessage(message);
            }
        };
        return settle(answers, api).thenApply(ignored -> {
            AlterShareGroupOffsetsResponseData out = new AlterShareGroupOffsetsResponseData();
            for (AlterShareGroupOffsetsResponseTopic t : local.responses()) {
                AlterShareGroupOffsetsResponseTopic topic = new AlterShareGroupOffsetsResponseTopic()
                        .setTopicName(t.topicName()).setTopicId(t.topicId());
                t.partitions().forEach(p -> topic.partitions().add(answers.get(
                        new TopicPartition(t.topicName(), p.partitionIndex())).duplicate()));
                out.responses().add(topic);
            }
            return new AlterShareGroupOffsetsResponse(out);
        });
    }

    CompletableFuture<DescribeShareGroupOffsetsResponse> describe(DescribeShareGroupOffsetsRequestData request,
                                                                  short version, boolean forwarded) {
        DescribeShareGroupOffsetsResponseData local = admin.describeOffsets(request);
        if (forwarded) {
            return CompletableFuture.completedFuture(new DescribeShareGroupOffsetsResponse(local));
        }
        List<CompletableFuture<DescribeShareGroupOffsetsResponseGroup>> groups = new ArrayList<>();
        for (DescribeShareGroupOffsetsResponseGroup group : local.groups()) {
            groups.add(group.errorCode() != Errors.NONE.code() ? CompletableFuture.completedFuture(group)
                    : describeGroup(group, version));
        }
        return CompletableFuture.allOf(groups.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
            DescribeShareGroupOffsetsResponseData out = new DescribeShareGroupOffsetsResponseData();
            groups.forEach(g -> out.groups().add(g.join()));
            return new DescribeShareGroupOffsetsResponse(out);
        });
    }

    private CompletableFuture<DescribeShareGroupOffsetsResponseGroup> describeGroup(
            DescribeShareGroupOffsetsResponseGroup local, short version) {
        String groupId = local.groupId();
        Map<TopicPartition, DescribeShareGroupOffsetsResponsePartition> answers = new LinkedHashMap<>();
        local.topics().forEach(t -> t.partitions().forEach(p -> answers.put(
                new TopicPartition(t.topicName(), p.partitionIndex()), p)));
        PartitionApi<DescribeShareGroupOffsetsResponsePartition> api = new PartitionApi<>() {
            @Override
            public Map<TopicPartition, DescribeShareGroupOffsetsResponsePartition> local(Set<TopicPartition> tps) {
                return describeAnswers(admin.describeOffsets(describeRequest(groupId, tps)).groups().get(0));
            }

            @Override
            public CompletableFuture<Map<TopicPartition, DescribeShareGroupOffsetsResponsePartition>> remote(
                    int leader, Set<TopicPartition> tps) {
                return sender.<DescribeShareGroupOffsetsResponse>send(leader, new DescribeShareGroupOffsetsRequest
                        .Builder(describeRequest(groupId, tps)), version).thenApply(r -> {
                            DescribeShareGroupOffsetsResponseGroup group = r.data().groups().get(0);
                            throwIfFailed(group.errorCode(), group.errorMessage());
                            return describeAnswers(group);
                        });
            }

            @Override
            public short errorOf(DescribeShareGroupOffsetsResponsePartition answer) {
                return answer.errorCode();
            }

            @Override
            public DescribeShareGroupOffsetsResponsePartition failed(TopicPartition tp, Errors error, String message) {
                return new DescribeShareGroupOffsetsResponsePartition().setPartitionIndex(tp.partition())
                        .setStartOffset(-1).setLeaderEpoch(-1).setLag(-1).setErrorCode(error.code())
                        .setErrorMessage(message);
            }
        };
        return settle(answers, api).thenApply(ignored -> {
            DescribeShareGroupOffsetsResponseGroup out = new DescribeShareGroupOffsetsResponseGroup()
                    .setGroupId(groupId).setErrorCode(local.errorCode()).setErrorMessage(local.errorMessage());
            for (DescribeShareGroupOffsetsResponseTopic t : local.topics()) {
                DescribeShareGroupOffsetsResponseTopic topic = new DescribeShareGroupOffsetsResponseTopic()
                        .setTopicName(t.topicName()).setTopicId(t.topicId());
                t.partitions().forEach(p -> topic.partitions().add(answers.get(
                        new TopicPartition(t.topicName(), p.partitionIndex())).duplicate()));
                out.topics().add(topic);
            }
            return out;
        });
    }

    CompletableFuture<DeleteShareGroupOffsetsResponse> delete(DeleteShareGroupOffsetsRequestData request,
                                                              short version, boolean forwarded) {
        DeleteShareGroupOffsetsResponseData local = admin.deleteOffsets(request, !forwarded);
        if (forwarded || local.errorCode() != Errors.NONE.code()) {
            return CompletableFuture.completedFuture(new DeleteShareGroupOffsetsResponse(local));
        }
        List<String> forgotten = local.responses().stream().filter(t -> t.errorCode() == Errors.NONE.code())
                .map(DeleteShareGroupOffsetsResponseTopic::topicName).toList();
        return passOnDelete(request.groupId(), forgotten, version).thenApply(failures -> {
            for (DeleteShareGroupOffsetsResponseTopic t : local.responses()) {
                ApiError failure = failures.get(t.topicName());
                if (failure != null && t.errorCode() == Errors.NONE.code()) {
                    t.setErrorCode(failure.error().code()).setErrorMessage(failure.message());
                }
            }
            return new DeleteShareGroupOffsetsResponse(local);
        });
    }

    /**
     * After share group {@code groupId} was deleted here (DeleteGroups): every other broker leading a partition of a
     * topic it had state on drops the share-partitions it holds in memory.
     *
     * @return per topic, the error of a leader that did not (empty when all did)
     */
    CompletableFuture<Map<String, ApiError>> dropElsewhere(String groupId, Collection<String> topics) {
        return passOnDelete(groupId, topics, ApiKeys.DELETE_SHARE_GROUP_OFFSETS.latestVersion());
    }

    /**
     * Passes DeleteShareGroupOffsets of {@code topics} on to every other broker that leads a partition of one, so that
     * it drops the share-partitions it holds; per topic, the error of a leader that did not (within the timeout).
     */
    private CompletableFuture<Map<String, ApiError>> passOnDelete(String groupId, Collection<String> topics,
                                                                  short version) {
        MetadataImage image = metadata.get();
        Map<Integer, List<String>> topicsByLeader = new TreeMap<>();
        for (String name : topics) {
            image.topic(name).ifPresent(topic -> topic.partitions().values().stream()
                    .map(PartitionImage::leader).filter(leader -> leader >= 0 && leader != nodeId).distinct()
                    .forEach(leader -> topicsByLeader.computeIfAbsent(leader, l -> new ArrayList<>()).add(name)));
        }
        Map<String, ApiError> failures = new ConcurrentHashMap<>();
        List<CompletableFuture<Void>> calls = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        topicsByLeader.forEach((leader, names) -> {
            DeleteShareGroupOffsetsRequestData sub = new DeleteShareGroupOffsetsRequestData().setGroupId(groupId);
            names.forEach(name -> sub.topics().add(new DeleteShareGroupOffsetsRequestData
                    .DeleteShareGroupOffsetsRequestTopic().setTopicName(name)));
            calls.add(deleteAt(leader, sub, version, deadline).handle((response, error) -> {
                if (error != null) {
                    Throwable cause = unwrap(error);
                    names.forEach(name -> failures.putIfAbsent(name, new ApiError(Errors.forException(cause),
                            "Broker " + leader + ", a leader of " + name + ", did not drop the group's "
                                    + "share-partitions: " + cause.getMessage())));
                } else {
                    response.data().responses().stream().filter(r -> r.errorCode() != Errors.NONE.code())
                            .forEach(r -> failures.putIfAbsent(r.topicName(), new ApiError(
                                    Errors.forCode(r.errorCode()), r.errorMessage())));
                }
                return null;
            }));
        });
        return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).thenApply(ignored -> failures);
    }

    /** Sends the delete to {@code leader}, again after the backoff while it cannot be reached, until the deadline. */
    private CompletableFuture<DeleteShareGroupOffsetsResponse> deleteAt(int leader, DeleteShareGroupOffsetsRequestData
            request, short version, long deadline) {
        return sender.<DeleteShareGroupOffsetsResponse>send(leader, new DeleteShareGroupOffsetsRequest.Builder(
                request), version).handle((response, error) -> {
                    if (error == null || System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RETRY_BACKOFF_MS)
                            - deadline > 0) {
                        return error == null ? CompletableFuture.completedFuture(response)
                                : CompletableFuture.<DeleteShareGroupOffsetsResponse>failedFuture(unwrap(error));
                    }
                    return CompletableFuture.supplyAsync(() -> null, CompletableFuture.delayedExecutor(
                            RETRY_BACKOFF_MS, TimeUnit.MILLISECONDS))
                            .thenCompose(ignored -> deleteAt(leader, request, version, deadline));
                }).thenCompose(f -> f);
    }

    /** One partition-level offsets API, answered for a set of partitions here or at their leader. */
    private interface PartitionApi<P> {
        Map<TopicPartition, P> local(Set<TopicPartition> partitions);

        CompletableFuture<Map<TopicPartition, P>> remote(int leader, Set<TopicPartition> partitions);

        short errorOf(P answer);

        P failed(TopicPartition tp, Errors error, String message);
    }

    /**
     * Replaces the answers of the partitions led elsewhere (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE) by their
     * leaders' answers, in rounds with fresh metadata until none is left or {@link #timeoutMs} has passed.
     * {@code answers} is changed in place, under its own lock.
     */
    private <P> CompletableFuture<Void> settle(Map<TopicPartition, P> answers, PartitionApi<P> api) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        round(answers, api, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs), done);
        return done;
    }

    private <P> void round(Map<TopicPartition, P> answers, PartitionApi<P> api, long deadline,
                           CompletableFuture<Void> done) {
        try {
            Set<TopicPartition> pending = pending(answers, api);
            if (pending.isEmpty()) {
                done.complete(null);
                return;
            }
            MetadataImage image = metadata.get();
            Map<Integer, Set<TopicPartition>> byLeader = new TreeMap<>();
            for (TopicPartition tp : pending) {
                int leader = image.topic(tp.topic()).map(t -> t.partitions().get(tp.partition()))
                        .map(PartitionImage::leader).orElse(-1);
                byLeader.computeIfAbsent(leader, l -> new LinkedHashSet<>()).add(tp);
            }
            List<CompletableFuture<Void>> calls = new ArrayList<>();
            for (Map.Entry<Integer, Set<TopicPartition>> e : byLeader.entrySet()) {
                int leader = e.getKey();
                Set<TopicPartition> tps = e.getValue();
                if (leader < 0) {
                    put(answers, tps, tp -> api.failed(tp, Errors.LEADER_NOT_AVAILABLE, tp + " has no leader"));
                } else if (leader == nodeId) {
                    Map<TopicPartition, P> here = api.local(tps);
                    put(answers, tps, here::get);
                } else {
                    calls.add(api.remote(leader, tps).handle((there, error) -> {
                        if (error != null) {
                            put(answers, tps, tp -> api.failed(tp, Errors.NOT_LEADER_OR_FOLLOWER, "Could not reach "
                                    + "broker " + leader + ", the leader of " + tp + ": " + unwrap(error)));
                        } else {
                            put(answers, tps, there::get);
                        }
                        return null;
                    }));
                }
            }
            CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).whenComplete((ignored, error) -> {
                if (pending(answers, api).isEmpty()
                        || System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RETRY_BACKOFF_MS) - deadline > 0) {
                    done.complete(null);
                } else {
                    CompletableFuture.runAsync(() -> round(answers, api, deadline, done),
                            CompletableFuture.delayedExecutor(RETRY_BACKOFF_MS, TimeUnit.MILLISECONDS));
                }
            });
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
    }

    private static <P> Set<TopicPartition> pending(Map<TopicPartition, P> answers, PartitionApi<P> api) {
        Set<TopicPartition> pending = new LinkedHashSet<>();
        synchronized (answers) {
            answers.forEach((tp, answer) -> {
                short error = api.errorOf(answer);
                if (error == Errors.NOT_LEADER_OR_FOLLOWER.code() || error == Errors.LEADER_NOT_AVAILABLE.code()) {
                    pending.add(tp);
                }
            });
        }
        return pending;
    }

    /** Puts the answers of {@code tps}; a partition a leader left out of its answer keeps its answer. */
    private static <P> void put(Map<TopicPartition, P> answers, Set<TopicPartition> tps,
                                Function<TopicPartition, P> answerOf) {
        synchronized (answers) {
            for (TopicPartition tp : tps) {
                P answer = answerOf.apply(tp);
                if (answer != null) {
                    answers.put(tp, answer);
                }
            }
        }
    }

    private static AlterShareGroupOffsetsRequestData alterRequest(String groupId, Map<TopicPartition, Long> offsets,
                                                                  Set<TopicPartition> tps) {
        AlterShareGroupOffsetsRequestData request = new AlterShareGroupOffsetsRequestData().setGroupId(groupId);
        for (TopicPartition tp : tps) {
            AlterShareGroupOffsetsRequestTopic topic = request.topics().find(tp.topic());
            if (topic == null) {
                topic = new AlterShareGroupOffsetsRequestTopic().setTopicName(tp.topic());
                request.topics().add(topic);
            }
            topic.partitions().add(new AlterShareGroupOffsetsRequestPartition().setPartitionIndex(tp.partition())
                    .setStartOffset(offsets.get(tp)));
        }
        return request;
    }

    private static Map<TopicPartition, AlterShareGroupOffsetsResponsePartition> alterAnswers(
            AlterShareGroupOffsetsResponseData response) {
        Map<TopicPartition, AlterShareGroupOffsetsResponsePartition> answers = new LinkedHashMap<>();
        response.responses().forEach(t -> t.partitions().forEach(p -> answers.put(
                new TopicPartition(t.topicName(), p.partitionIndex()), p)));
        return answers;
    }

    private static DescribeShareGroupOffsetsRequestData describeRequest(String groupId, Set<TopicPartition> tps) {
        Map<String, DescribeShareGroupOffsetsRequestTopic> topics = new LinkedHashMap<>();
        for (TopicPartition tp : tps) {
            topics.computeIfAbsent(tp.topic(), name -> new DescribeShareGroupOffsetsRequestTopic().setTopicName(name))
                    .partitions().add(tp.partition());
        }
        return new DescribeShareGroupOffsetsRequestData().setGroups(List.of(new DescribeShareGroupOffsetsRequestGroup()
                .setGroupId(groupId).setTopics(new ArrayList<>(topics.values()))));
    }

    private static Map<TopicPartition, DescribeShareGroupOffsetsResponsePartition> describeAnswers(
            DescribeShareGroupOffsetsResponseGroup group) {
        Map<TopicPartition, DescribeShareGroupOffsetsResponsePartition> answers = new LinkedHashMap<>();
        group.topics().forEach(t -> t.partitions().forEach(p -> answers.put(
                new TopicPartition(t.topicName(), p.partitionIndex()), p)));
        return answers;
    }

    private static void throwIfFailed(short errorCode, String message) {
        if (errorCode != Errors.NONE.code()) {
            throw Errors.forCode(errorCode).exception(message);
        }
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }
}
