package dev.millrace.broker.server;

import java.io.File;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;

import dev.millrace.broker.log.ManualTime;
import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;
import dev.millrace.broker.log.LogMaintenance;
import dev.millrace.broker.network.KafkaServer;
import dev.millrace.broker.network.RequestHandler;
import dev.millrace.broker.replica.BrokerEndpoints;
import dev.millrace.broker.replica.IsrUpdater;
import dev.millrace.broker.replica.ReplicaConfig;
import dev.millrace.delay.SystemTimer;
import dev.millrace.delay.Timer;
import dev.millrace.delay.TimerReaper;
import dev.millrace.protocol.net.BrokerChannel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * Brokers for replication tests, in process on 127.0.0.1: each is a {@link PartitionManager} behind a real
 * {@link KafkaServer} serving Produce, Fetch, ListOffsets and OffsetsForLeaderEpoch with the broker's own handlers,
 * so followers fetch over the network. The test plays the controller: it builds the metadata of one partition
 * ({@value #TOPIC}-0) by hand and {@link #publish}es it to every running broker, and the brokers' ISR changes go to
 * a stand-in for the controller that checks the leader and partition epochs (as AlterPartition does), commits the
 * change into the next image and publishes it. Every broker shares one {@link ManualTime} for
 * {@code replica.lag.time.max.ms}.
 *
 * <p>Thread-safe; {@link #close} stops every broker, client and thread it started.
 */
public final class ReplicaTestCluster implements AutoCloseable {

    public static final String TOPIC = "replicated";
    public static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    private final Path dir;
    private final ReplicaConfig config;
    private final Map<String, String> topicConfigs;
    private final Uuid topicId = Uuid.randomUuid();
    private final ManualTime time = new ManualTime(1_000_000L);
    private final Map<Integer, Node> nodes = new TreeMap<>();
    private final Map<Integer, InetSocketAddress> addresses = new ConcurrentHashMap<>();
    private final EventLoopGroup clientLoop = new NioEventLoopGroup(1,
            new DefaultThreadFactory("test-replica-client", true));
    /** Connections for reads, and for produces (a broker answers a connection in order: a waiting acks=all
     *  produce would hold back the reads behind it). Keyed by broker id, negative for the producers'. */
    private final Map<Integer, BrokerChannel> clients = new ConcurrentHashMap<>();
    private MetadataImage image = MetadataImage.EMPTY;
    private PartitionImage state;
    private int isrChanges;

    /** Starts {@code brokers} brokers with ids 1..brokers (none holds the partition until {@link #publish}). */
    public ReplicaTestCluster(Path dir, int brokers, ReplicaConfig config, Map<String, String> topicConfigs)
            throws Exception {
        this.dir = dir;
        this.config = config;
        this.topicConfigs = Map.copyOf(topicConfigs);
        for (int id = 1; id <= brokers; id++) {
            Node node = new Node(id);
            nodes.put(id, node);
            node.start();
        }
    }

    public ManualTime time() {
        return time;
    }

    /** The partition's metadata as it stands (the last published image). */
    public synchronized PartitionImage state() {
        return state;
    }

    /** How many ISR changes the stand-in controller committed. */
    public synchronized int isrChanges() {
        return isrChanges;
    }

    /** Publishes {@code next} as the partition's state to every running broker, in order. */
    public synchronized void publish(PartitionImage next) {
        state = next;
        MetadataImage previous = image;
        image = new MetadataImage(previous.appliedIndex() + 1, Map.of(TOPIC, new TopicImage(TOPIC, topicId,
                Map.of(0, next), topicConfigs)));
        for (Node node : nodes.values()) {
            if (node.running()) {
                node.partitions.onMetadataUpdate(previous, image);
            }
        }
    }

    /** The partition on {@code node}. */
    public Partition partition(int node) {
        return nodes.get(node).partitions.partition(TP).orElseThrow();
    }

    public PartitionManager partitionManager(int node) {
        return nodes.get(node).partitions;
    }

    /** Stops {@code node} as a crash would, without telling the others (its logs stay on disk). */
    public void stop(int node) {
        for (int key : new int[] {node, -node}) {
            BrokerChannel client = clients.remove(key);
            if (client != null) {
                client.close();
            }
        }
        nodes.get(node).stop();
    }

    /** Starts {@code node} again on its logs and hands it the current metadata. */
    public void restart(int node) throws Exception {
        Node n = nodes.get(node);
        n.start();
        synchronized (this) {
            n.partitions.onMetadataUpdate(MetadataImage.EMPTY, image);
        }
    }

    /** Produces {@code values} to {@code node} (acks, request timeout); completes with the partition's response. */
    public CompletableFuture<ProduceResponseData.PartitionProduceResponse> produce(int node, short acks,
                                                                                  int timeoutMs, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(values[i].getBytes());
        }
        ProduceRequestData data = new ProduceRequestData().setAcks(acks).setTimeoutMs(timeoutMs);
        ProduceRequestData.TopicProduceData topicData = new ProduceRequestData.TopicProduceData().setName(TOPIC);
        topicData.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0)
                .setRecords(MemoryRecords.withRecords(Compression.NONE, records)));
        data.topicData().add(topicData);
        short version = 12;
        return producer(node).<ProduceResponse>send(new ProduceRequest.Builder(version, version, data), version)
                .thenApply(r -> r.data().responses().iterator().next().partitionResponses().get(0));
    }

    /** The whole produce response of a one-partition produce (for the KIP-951 node endpoints). */
    public ProduceResponseData produceResponse(int node, String value) throws Exception {
        ProduceRequestData data = new ProduceRequestData().setAcks((short) 1).setTimeoutMs(10_000);
        ProduceRequestData.TopicProduceData topicData = new ProduceRequestData.TopicProduceData().setName(TOPIC);
        topicData.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0)
                .setRecords(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(value.getBytes()))));
        data.topicData().add(topicData);
        short version = 12;
        return client(node).<ProduceResponse>send(new ProduceRequest.Builder(version, version, data), version)
                .get(30, TimeUnit.SECONDS).data();
    }

    /** A consumer's fetch (replica id -1, no wait) at {@code offset}, with {@code currentLeaderEpoch} (-1: none). */
    public FetchResponseData.PartitionData consumerFetch(int node, long offset, int currentLeaderEpoch)
            throws Exception {
        Map<TopicPartition, FetchRequest.PartitionData> data = Map.of(TP, new FetchRequest.PartitionData(topicId,
                offset, 0, 1024 * 1024, currentLeaderEpoch < 0 ? Optional.empty() : Optional.of(currentLeaderEpoch)));
        short version = 12;
        FetchResponse response = client(node).<FetchResponse>send(
                FetchRequest.Builder.forConsumer(version, 0, 1, data), version).get(30, TimeUnit.SECONDS);
        return response.data().responses().get(0).partitions().get(0);
    }

    /** The values a consumer's fetch at {@code offset} returns from {@code node}. */
    public List<String> consumerRead(int node, long offset) throws Exception {
        return values(consumerFetch(node, offset, -1));
    }

    public static List<String> values(FetchResponseData.PartitionData data) {
        List<String> values = new ArrayList<>();
        ((MemoryRecords) data.records()).records().forEach(r -> {
            byte[] bytes = new byte[r.valueSize()];
            r.value().get(bytes);
            values.add(new String(bytes));
        });
        return values;
    }

    /** ListOffsets latest on {@code node}. */
    public ListOffsetsResponseData.ListOffsetsPartitionResponse listLatest(int node) throws Exception {
        ListOffsetsRequestData.ListOffsetsTopic topic = new ListOffsetsRequestData.ListOffsetsTopic().setName(TOPIC);
        topic.partitions().add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0)
                .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP));
        short version = ApiKeys.LIST_OFFSETS.latestVersion();
        ListOffsetsResponse response = client(node).<ListOffsetsResponse>send(ListOffsetsRequest.Builder
                .forConsumer(false, org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED)
                .setTargetTimes(List.of(topic)), version).get(30, TimeUnit.SECONDS);
        return response.data().topics().get(0).partitions().get(0);
    }

    /** Every value in {@code node}'s log, read straight from the file (the whole log, not only the committed part). */
    public List<String> logValues(int node) {
        Partition partition = partition(node);
        List<String> values = new ArrayList<>();
        long offset = partition.log().logStartOffset();
        while (offset < partition.log().logEndOffset()) {
            var records = partition.log().read(offset, 1024 * 1024, true).records();
            for (var batch : records.batches()) {
                for (var record : batch) {
                    byte[] bytes = new byte[record.valueSize()];
                    record.value().get(bytes);
                    values.add(new String(bytes));
                }
                offset = batch.lastOffset() + 1;
            }
        }
        return values;
    }

    /**
     * Waits for {@code condition}, re-checking every millisecond; the test's {@code @Timeout} bounds the wait (the
     * brokers move on their own threads, so there is nothing to be told of).
     */
    public static void await(BooleanSupplier condition) {
        while (!condition.getAsBoolean()) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            if (Thread.currentThread().isInterrupted()) {
                throw new IllegalStateException("interrupted while waiting");
            }
        }
    }

    private BrokerChannel producer(int node) {
        return connection(-node);
    }

    private BrokerChannel client(int node) {
        return connection(node);
    }

    private BrokerChannel connection(int key) {
        return clients.computeIfAbsent(key, k -> {
            int id = Math.abs(k);
            InetSocketAddress address = addresses.get(id);
            try {
                return BrokerChannel.connect(clientLoop.next(), address.getHostString(), address.getPort(),
                        "test-client", 30_000).get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("cannot connect to broker " + id, e);
            }
        });
    }

    /** The stand-in controller's AlterPartition: checks the epochs, commits, publishes, answers. */
    private synchronized CompletableFuture<PartitionImage> alterIsr(int leaderEpoch, List<Integer> newIsr,
                                                                    int partitionEpoch) {
        if (leaderEpoch != state.leaderEpoch()) {
            return CompletableFuture.failedFuture(new FencedLeaderEpochException("leader epoch " + leaderEpoch
                    + " is not the current " + state.leaderEpoch()));
        }
        if (partitionEpoch != state.partitionEpoch()) {
            return CompletableFuture.failedFuture(new InvalidUpdateVersionException("partition epoch "
                    + partitionEpoch + " is not the current " + state.partitionEpoch()));
        }
        PartitionImage next = new PartitionImage(0, state.replicas(), newIsr, state.leader(), leaderEpoch,
                partitionEpoch + 1);
        isrChanges++;
        publish(next);
        return CompletableFuture.completedFuture(next);
    }

    @Override
    public void close() {
        clients.values().forEach(BrokerChannel::close);
        clients.clear();
        for (Node node : nodes.values()) {
            node.stop();
        }
        clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }

    /** One broker: partitions, purgatories, handlers and listener. */
    private final class Node {
        final int id;
        PartitionManager partitions;
        KafkaServer server;
        Timer timer;
        ExecutorService requests;
        ExecutorService wakeups;

        Node(int id) {
            this.id = id;
        }

        boolean running() {
            return partitions != null;
        }

        void start() throws Exception {
            IsrUpdater isrUpdater = (tp, topic, leaderEpoch, newIsr, partitionEpoch) ->
                    alterIsr(leaderEpoch, newIsr, partitionEpoch);
            BrokerEndpoints endpoints = brokerId -> Optional.ofNullable(addresses.get(brokerId));
            PartitionManager manager = new PartitionManager(id, new File(dir.toFile(), "broker-" + id), Map.of(), time,
                    (name, task, delayMs) -> { }, new LogMaintenance(), config, isrUpdater, endpoints);
            timer = TimerReaper.start("test-timer-reaper-" + id, new SystemTimer("test-timer-" + id),
                    TimerReaper.DEFAULT_REAP_INTERVAL_MS);
            wakeups = Executors.newSingleThreadExecutor();
            requests = Executors.newFixedThreadPool(4);
            FetchPurgatory fetchPurgatory = new FetchPurgatory(timer, wakeups);
            ProducePurgatory producePurgatory = new ProducePurgatory(timer);
            manager.addChangeListener(tp -> {
                producePurgatory.onPartitionChange(tp);
                fetchPurgatory.onAppendLater(tp);
            });
            ProduceHandler produce = new ProduceHandler(manager, fetchPurgatory, producePurgatory, endpoints, null,
                    Runnable::run, Map.of());
            FetchHandler fetch = new FetchHandler(manager, fetchPurgatory);
            ListOffsetsHandler listOffsets = new ListOffsetsHandler(manager);
            OffsetsForLeaderEpochHandler epochs = new OffsetsForLeaderEpochHandler(manager);
            RequestHandler handler = (context, request) -> switch (context.header.apiKey()) {
                case PRODUCE -> produce.handle((ProduceRequest) request).thenApply(r -> (AbstractResponse) r);
                case FETCH -> fetch.handle((FetchRequest) request).thenApply(r -> (AbstractResponse) r);
                case LIST_OFFSETS -> CompletableFuture.completedFuture(
                        listOffsets.handle((ListOffsetsRequest) request));
                case OFFSET_FOR_LEADER_EPOCH -> CompletableFuture.completedFuture(
                        epochs.handle((OffsetsForLeaderEpochRequest) request));
                default -> CompletableFuture.failedFuture(new UnsupportedOperationException(
                        context.header.apiKey() + " is not served in this test"));
            };
            server = new KafkaServer("127.0.0.1", 0, 100 * 1024 * 1024, handler, KafkaApis.VERSIONS, requests);
            addresses.put(id, server.start());
            partitions = manager;
        }

        void stop() {
            if (!running()) {
                return;
            }
            addresses.remove(id);
            server.close();
            requests.shutdownNow();
            partitions.close();
            partitions = null;
            wakeups.shutdownNow();
            timer.close();
        }
    }
}
