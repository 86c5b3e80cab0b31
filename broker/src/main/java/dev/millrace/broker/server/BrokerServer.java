package dev.millrace.broker.server;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.cluster.BrokerLifecycle;
import dev.millrace.broker.cluster.ControllerApis;
import dev.millrace.broker.cluster.ControllerClient;
import dev.millrace.broker.cluster.ControllerIsrUpdater;
import dev.millrace.broker.controller.BrokerState;
import dev.millrace.broker.coordinator.ReplicationAwaiter;
import dev.millrace.broker.controller.ListenerEndpoint;
import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.BrokerImage;
import dev.millrace.broker.replica.BrokerEndpoints;
import dev.millrace.broker.replica.IsrUpdater;
import dev.millrace.broker.replica.ReplicaConfig;
import dev.millrace.broker.config.BrokerConfig;
import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.delay.DeadBrokerRounds;
import dev.millrace.broker.delay.DelayLogs;
import dev.millrace.broker.delay.DelayedDeliveryService;
import dev.millrace.broker.delay.ProducerRoundWriter;
import dev.millrace.broker.group.GroupCoordinator;
import dev.millrace.broker.group.GroupCoordinatorConfig;
import dev.millrace.broker.group.OffsetsTopic;
import dev.millrace.broker.share.ClusterShareStateStore;
import dev.millrace.broker.share.LogShareStateStore;
import dev.millrace.broker.share.ShareGroupConfigs;
import dev.millrace.broker.share.ShareStateCoordinator;
import dev.millrace.broker.share.ShareStateHandler;
import dev.millrace.broker.txn.TransactionStateTopic;
import dev.millrace.broker.log.LogMaintenance;
import dev.millrace.broker.log.Scheduler;
import dev.millrace.broker.config.ListenerSettings.Listener;
import dev.millrace.broker.network.KafkaServer;
import dev.millrace.broker.network.NetworkStats;
import dev.millrace.broker.network.NotServingException;
import dev.millrace.broker.security.BrokerListenerSecurity;
import dev.millrace.broker.security.InterBrokerSecurity;
import dev.millrace.broker.network.RequestHandler;
import dev.millrace.broker.quota.ClientQuotaManager;
import dev.millrace.broker.share.ShareBroker;
import dev.millrace.broker.txn.ProducerIdManager;
import dev.millrace.broker.txn.TransactionCoordinator;
import dev.millrace.delay.SystemTimer;
import dev.millrace.delay.Timer;
import dev.millrace.delay.TimerReaper;
import dev.millrace.protocol.delay.DelayedDelivery;
import dev.millrace.protocol.ext.ExtensionHeader;
import dev.millrace.protocol.net.ClientSecurity;

/**
 * One broker process: the metadata controller, the partition logs, log maintenance, the timing
 * wheel for delayed operations, the consumer-group coordinator (over the internal
 * {@code __consumer_offsets} topic, created at first start) and the Kafka-protocol listener,
 * started in dependency order and closed in reverse.
 *
 * <pre>
 *  &lt;data.dir&gt;/meta.properties     cluster id and node id (ClusterIdentity)
 *  &lt;data.dir&gt;/metadata/           the metadata quorum's log, meta and snapshots (SOFAJRaft)
 *  &lt;data.dir&gt;/logs/&lt;topic&gt;-&lt;p&gt;/    partition logs (LogFiles)
 * </pre>
 *
 * <p>Thread-safe start and close; close is idempotent and runs from the shutdown hook on SIGTERM.
 */
public final class BrokerServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(BrokerServer.class);

    private final BrokerConfig config;
    private final Time time;
    private final ControllerFactory controllerFactory;
    private ScheduledExecutorService background;
    private ExecutorService requestExecutor;
    /** Completes the fetches that transaction markers wake (see {@link FetchPurgatory#onAppendLater}). */
    private ExecutorService markerWakeups;
    private Timer timer;
    private volatile Controller controller;
    private ExecutorService groupExecutor;
    private GroupCoordinator groups;
    private ShareBroker shares;
    private ShareStateCoordinator shareStates;
    private ClusterShareStateStore shareStateStore;
    /** Share-group offset calls passed on to the share-partitions' leaders. */
    private BrokerRequestSender shareRequests;
    private KafkaApis kafkaApis;
    private ClientQuotaManager clientQuotas;
    private PartitionManager partitions;
    private TransactionCoordinator transactions;
    private DelayedDeliveryService delays;
    /** Aborts the delivery round a fenced broker left open (cluster mode; null on one node). */
    private DeadBrokerRounds deadBrokerRounds;
    private ClusterTxnMarkerWriter txnMarkers;
    /** Coordinator appends waiting for their internal partition's in-sync replicas. */
    private ReplicationWaiters replicationWaiters;
    /** One per listener, in the order of {@code listeners}. */
    private final List<KafkaServer> network = new ArrayList<>();
    /** One per listener, in the order of {@code listeners}: their TLS engines and SASL users. */
    private List<BrokerListenerSecurity> security = List.of();
    /** How this node connects to the others (their inter-broker listener). */
    private ClientSecurity interBrokerSecurity = ClientSecurity.PLAINTEXT;
    /** Where clients of each listener reach this broker. */
    private final Map<String, InetSocketAddress> boundAddresses = new LinkedHashMap<>();
    private volatile ControllerClient controllerClient;
    /**
     * The lifecycle's own channel to the active controller (registration, heartbeats): a connection answers one
     * request at a time, and heartbeats queued behind AlterPartitions that each wait for a Raft commit arrived late
     * enough for the controller to fence live brokers (Kafka keeps them apart too).
     */
    private volatile ControllerClient lifecycleClient;
    private BrokerEndpoints endpoints;
    private volatile IsrUpdater isrUpdater;
    private volatile BrokerLifecycle lifecycle;
    private InetSocketAddress boundAddress;
    private boolean closed;

    /**
     * Builds the controller for this broker's config and data directory; {@code initialClusterId} is the id the
     * first active controller commits when the quorum has none yet.
     */
    @FunctionalInterface
    public interface ControllerFactory {
        Controller create(BrokerConfig config, File metadataDir, String initialClusterId) throws IOException;
    }

    public BrokerServer(BrokerConfig config, Time time) {
        this(config, time, RaftControllerFactory::create);
    }

    BrokerServer(BrokerConfig config, Time time, ControllerFactory controllerFactory) {
        this.config = config;
        this.time = time;
        this.controllerFactory = controllerFactory;
    }

    /**
     * Starts the node in dependency order:
     * <ol>
     *   <li>the metadata quorum voter (on a node outside {@code controller.quorum.voters}, a learner that applies
     *       the same log but never votes); once a leader is known and the log replayed, the quorum's cluster id
     *       is checked against (or written to) {@code meta.properties};</li>
     *   <li>the Kafka listener, answering at first only the controller APIs other nodes send to the active
     *       controller ({@link ControllerApis}); any other request closes its connection
     *       ({@link NotServingException}), so that the client goes to another node;</li>
     *   <li>registration with the active controller, then heartbeats until it unfences this broker (it has caught
     *       up with the metadata);</li>
     *   <li>the internal topics, created once by the active controller's node with replication factor
     *       min(3, voters), awaited by the others;</li>
     *   <li>the coordinators, the delay service and the full set of APIs.</li>
     * </ol>
     */
    public synchronized void start() throws Exception {
        // TLS stores and PLAIN users first: a wrong setting stops the broker before it touches its data
        List<Listener> listeners = config.listeners();
        security = BrokerListenerSecurity.forListeners(config,
                (user, mechanism) -> controller == null ? Optional.empty()
                        : controller.image().scramCredential(user, mechanism));
        if (config.isClusterMode()) {
            interBrokerSecurity = InterBrokerSecurity.forConfig(config);
        }
        File dataDir = config.dataDir().getAbsoluteFile();
        java.nio.file.Files.createDirectories(dataDir.toPath());
        Optional<ClusterIdentity> stored = ClusterIdentity.load(dataDir, config.nodeId());
        background = Executors.newScheduledThreadPool(1, r -> daemon(r, "millrace-log-maintenance"));
        Scheduler scheduler = (name, task, delayMs) -> background.schedule(task, delayMs, TimeUnit.MILLISECONDS);
        LogMaintenance maintenance = new LogMaintenance(config.logRecoveryFlushIntervalMs());
        // the controller, its client and this broker's registration come next; ISR changes and leader lookups
        // only happen once they exist (a partition leads or follows only after the metadata says so)
        endpoints = brokerId -> {
            BrokerImage broker = controller.image().brokers().get(brokerId);
            return broker == null || broker.state() == BrokerState.FENCED ? Optional.empty()
                    : Optional.of(new InetSocketAddress(broker.host(), broker.port()));
        };
        partitions = new PartitionManager(config.nodeId(), new File(dataDir, "logs"), config.logDefaults(), time,
                scheduler, maintenance, ReplicaConfig.defaults()
                        .withReplicaLagTimeMaxMs(config.replicaLagTimeMaxMs())
                        .withReplicaFetchWaitMaxMs(config.replicaFetchWaitMaxMs()),
                (tp, topicId, leaderEpoch, newIsr, partitionEpoch) -> isrUpdater.alterIsr(tp, topicId, leaderEpoch,
                        newIsr, partitionEpoch), endpoints, interBrokerSecurity);
        String initialClusterId = stored.map(ClusterIdentity::clusterId).orElseGet(() -> Uuid.randomUuid().toString());
        controller = controllerFactory.create(config, new File(dataDir, "metadata"), initialClusterId);
        controller.registerListener(partitions);
        controller.start();
        partitions.enableReplicaRemoval(); // the metadata log is replayed: images from here on are not history
        ClusterIdentity identity = ClusterIdentity.adopt(dataDir, stored, awaitClusterId(), config.nodeId());
        controllerClient = new ControllerClient(config.nodeId(), controller, config.brokerSessionTimeoutMs(), 100,
                interBrokerSecurity);
        lifecycleClient = new ControllerClient(config.nodeId(), controller, config.brokerSessionTimeoutMs(), 100,
                interBrokerSecurity);
        ControllerApis controllerApis = new ControllerApis(controller);
        requestExecutor = Executors.newFixedThreadPool(config.numIoThreads(), r -> daemon(r, "millrace-request"));
        AtomicReference<RequestHandler> apis = new AtomicReference<>();
        RequestHandler handler = new RequestHandler() {
            @Override
            public CompletableFuture<AbstractResponse> handle(RequestContext context, AbstractRequest request) {
                if (ControllerApis.handles(request.apiKey())) {
                    return controllerApis.handle(context.connectionId, request).orElseThrow();
                }
                RequestHandler target = apis.get();
                return target == null
                        ? CompletableFuture.failedFuture(new NotServingException("the broker is starting"))
                        : target.handle(context, request);
            }

            @Override
            public void onConnectionClosed(String connectionId) {
                controllerApis.onConnectionClosed(connectionId);
                RequestHandler target = apis.get();
                if (target != null) {
                    target.onConnectionClosed(connectionId);
                }
            }

            @Override
            public CompletableFuture<Struct> handleExtension(ExtensionHeader header, ByteBuffer body) {
                RequestHandler target = apis.get();
                return target == null
                        ? CompletableFuture.failedFuture(new NotServingException("the broker is starting"))
                        : target.handleExtension(header, body);
            }
        };
        ClientEndpoints.Builder clientEndpoints = new ClientEndpoints.Builder(config.nodeId(), () -> controller.image());
        for (int i = 0; i < listeners.size(); i++) {
            Listener listener = listeners.get(i);
            KafkaServer server = new KafkaServer(listener.host(), listener.port(), config.connectionLimits(), handler,
                    KafkaApis.VERSIONS, requestExecutor, security.get(i));
            network.add(server);
            InetSocketAddress bound = server.start();
            boundAddresses.put(listener.name(), bound);
            clientEndpoints.add(listener.name(), listener.advertisedHost(), listener.advertisedPort(bound.getPort()));
        }
        Listener interBroker = config.interBrokerListener();
        boundAddress = boundAddresses.get(interBroker.name());
        String advertisedHost = interBroker.advertisedHost();
        int advertisedPort = interBroker.advertisedPort(boundAddress.getPort());
        // with listeners set, every listener's advertised address is registered, so that any broker's Metadata
        // tells a client the addresses of the listener it uses on every node
        boolean oneDefaultListener = listeners.size() == 1 && listeners.get(0).name().equals("PLAINTEXT");
        Map<String, ListenerEndpoint> registeredListeners = new LinkedHashMap<>();
        if (!oneDefaultListener) {
            clientEndpoints.forEach((name, endpoint) -> registeredListeners.put(name,
                    new ListenerEndpoint(endpoint.host(), endpoint.port())));
        }
        lifecycle = new BrokerLifecycle(new BrokerLifecycle.Settings(config.nodeId(), identity.clusterId(),
                advertisedHost, advertisedPort, config.brokerRack().orElse(null),
                config.brokerHeartbeatIntervalMs(), 2L * config.brokerSessionTimeoutMs() + 10_000,
                registeredListeners, InterBrokerSecurity.credentialSettings(config)),
                lifecycleClient, () -> controller.image().appliedIndex());
        isrUpdater = new ControllerIsrUpdater(config.nodeId(), controllerClient, lifecycle::brokerEpoch,
                controller::image);
        lifecycle.start().get(2L * config.brokerSessionTimeoutMs() + 60_000, TimeUnit.MILLISECONDS);
        int voters = config.quorumVoters().size();
        InternalTopics.ensureAll(controller, partitions, config.nodeId(), (short) Math.min(3, voters),
                config.offsetsTopicNumPartitions(), config.transactionStateLogNumPartitions(),
                config.delayTopicNumPartitions(), config.offsetsTopicNumPartitions(), 120_000);
        timer = TimerReaper.start("millrace-timer-reaper", new SystemTimer("millrace-timer"),
                TimerReaper.DEFAULT_REAP_INTERVAL_MS);
        replicationWaiters = new ReplicationWaiters(partitions, timer,
                config.replicaLagTimeMaxMs() + partitions.replicaConfig().isrCheckIntervalMs() + 5_000);
        partitions.addChangeListener(replicationWaiters::onPartitionChange);
        groupExecutor = Executors.newSingleThreadExecutor(r -> daemon(r, "millrace-group-coordinator"));
        groups = new GroupCoordinator(GroupCoordinatorConfig.defaults()
                .withInitialRebalanceDelayMs(config.groupInitialRebalanceDelayMs()),
                InternalTopics.offsetsTopic(controller, partitions), InternalTopics.topicIds(controller),
                replicationWaiters.forTopic(OffsetsTopic.NAME), timer, dev.millrace.delay.Time.SYSTEM, groupExecutor);
        // serves the __consumer_offsets partitions led here, loading each when elected; start reports once those led
        // now are loaded (on one node: all of them)
        partitions.addElectionListener(OffsetsTopic.NAME, groups);
        groups.awaitLoaded().get(120, TimeUnit.SECONDS);
        markerWakeups = Executors.newSingleThreadExecutor(r -> daemon(r, "millrace-marker-wakeups"));
        FetchPurgatory purgatory = new FetchPurgatory(timer, markerWakeups);
        ProducePurgatory producePurgatory = new ProducePurgatory(timer);
        partitions.addChangeListener(tp -> {
            producePurgatory.onPartitionChange(tp);
            purgatory.onAppendLater(tp);
        });
        ProducerIdManager producerIds = new ProducerIdManager(
                brokerId -> controllerClient.allocateProducerIds(brokerId, lifecycle.brokerEpoch()), config.nodeId());
        LocalTxnMarkerWriter markerWriter = new LocalTxnMarkerWriter(partitions, purgatory, groups,
                replicationWaiters, time);
        txnMarkers = new ClusterTxnMarkerWriter(config.nodeId(), controller::image, endpoints, markerWriter, 10_000,
                (int) (config.replicaLagTimeMaxMs() + partitions.replicaConfig().isrCheckIntervalMs() + 15_000),
                interBrokerSecurity);
        ReplicationAwaiter txnStateReplicas = replicationWaiters.forTopic(TransactionStateTopic.NAME);
        TransactionStateTopic txnStateTopic = InternalTopics.transactionStateTopic(controller, partitions);
        transactions = new TransactionCoordinator(new TransactionCoordinator.Config(config.transactionMaxTimeoutMs(),
                config.transactionAbortTimedOutTransactionCleanupIntervalMs()),
                txnStateTopic, producerIds, txnMarkers, p -> {
                    // followers fetching the partition learn of the append at once, not at their fetch's max wait
                    purgatory.onAppendLater(new TopicPartition(TransactionStateTopic.NAME, p));
                    return txnStateReplicas.awaitLogEnd(p);
                }, dev.millrace.delay.Time.SYSTEM, timer);
        // the coordinator serves the __transaction_state partitions led here, loading each when elected
        partitions.addElectionListener(TransactionStateTopic.NAME, transactions);
        if (!config.isClusterMode()) {
            // one node leads every partition: the delay service and share transactions find all of them loaded
            for (int p = 0; p < txnStateTopic.partitionCount(); p++) {
                transactions.whenLoaded(p).get(60, TimeUnit.SECONDS);
            }
        }
        int delayPartitions = controller.image().topic(DelayedDelivery.TOPIC).orElseThrow().partitions().size();
        DelayLogs delayLogs = InternalTopics.delayLogs(controller, partitions);
        if (config.isClusterMode()) {
            // Rounds go through a transactional producer (targets may be led anywhere) under this broker's own id;
            // its transaction timeout bounds how long a round left open by a dead broker holds back a partition.
            int roundTimeoutMs = (int) Math.min(10_000, config.transactionMaxTimeoutMs());
            delays = new DelayedDeliveryService(new DelayedDeliveryService.Config(delayPartitions, config.delayMaxMs(),
                    roundTimeoutMs, new File(dataDir, "delay-checkpoints"), config.delayCacheBytes()), delayLogs,
                    ProducerRoundWriter.create(advertisedHost + ":" + advertisedPort,
                            DelayedDeliveryService.TRANSACTIONAL_ID + "-node-" + config.nodeId(), roundTimeoutMs,
                            interBrokerSecurity.kafkaConfigs(), delayLogs), timer, dev.millrace.delay.Time.SYSTEM);
            // a killed broker's open round would otherwise hold its targets and delay partitions until it times out
            deadBrokerRounds = new DeadBrokerRounds(config.nodeId(),
                    id -> DelayedDeliveryService.TRANSACTIONAL_ID + "-node-" + id,
                    ProducerRoundWriter.fencer(advertisedHost + ":" + advertisedPort, roundTimeoutMs,
                            interBrokerSecurity.kafkaConfigs()),
                    controller::image);
            controller.registerListener(deadBrokerRounds);
        } else {
            delays = new DelayedDeliveryService(new DelayedDeliveryService.Config(delayPartitions, config.delayMaxMs(),
                    60_000, new File(dataDir, "delay-checkpoints"), config.delayCacheBytes()), delayLogs,
                    transactions, timer, dev.millrace.delay.Time.SYSTEM);
            delays.start();
        }
        purgatory.addAppendListener(delays::onAppend);
        partitions.addElectionListener(DelayedDelivery.TOPIC, delays.election());
        ClientEndpoints endpointsForClients = clientEndpoints.build(interBroker.name());
        TransactionHandler transactionHandler = new TransactionHandler(transactions, partitions,
                InternalTopics.offsetsTopic(controller, partitions).partitionCount(), tp -> controller.image()
                .topic(tp.topic()).map(t -> t.partitions().containsKey(tp.partition())).orElse(false));
        shareRequests = new BrokerRequestSender(config.nodeId(), endpoints, 30_000, interBrokerSecurity);
        TxnVerifier txnVerifier = new TxnVerifier(config.nodeId(), ClusterCoordinatorLocators.forTopic(controller,
                TransactionStateTopic.NAME), txnStateTopic, transactions, shareRequests);
        groups.setTxnOffsetsVerifier((transactionalId, producerId, epoch, offsetsPartition) -> txnVerifier.verify(
                transactionalId, producerId, epoch, List.of(offsetsPartition)).thenApply(errors -> errors.getOrDefault(
                offsetsPartition, Errors.UNKNOWN_SERVER_ERROR)));
        kafkaApis = new KafkaApis(new MetadataHandler(controller, controllerClient::createTopics, endpointsForClients,
                identity.clusterId(), config.autoCreateTopicsEnable()), new ProduceHandler(partitions, purgatory,
                producePurgatory, endpoints, txnVerifier, requestExecutor, Map.of(DelayedDelivery.TOPIC,
                delays::validate)),
                new FetchHandler(partitions, purgatory), new ListOffsetsHandler(partitions),
                new OffsetsForLeaderEpochHandler(partitions),
                new TopicAdminHandler(controller, controllerClient, partitions, BrokerConfigLoader.values(config)),
                new PartitionAdminHandler(controller, controllerClient), new DeleteRecordsHandler(partitions),
                new InitProducerIdHandler(producerIds), groups, transactionHandler,
                findCoordinatorHandler(endpointsForClients));
        ServerShareTopics shareTopics = new ServerShareTopics(controller, partitions, purgatory, endpoints,
                config.nodeId(), shareRequests, replicationWaiters::awaitLogEnd);
        // share-partition state: served by the leaders of __share_group_state's partitions, loaded as they are elected
        shareStates = new ShareStateCoordinator(shareTopics, new LogShareStateStore(shareTopics,
                controller.image().topic(LogShareStateStore.TOPIC).orElseThrow().partitions().size(),
                dev.millrace.delay.Time.SYSTEM), replicationWaiters.forTopic(LogShareStateStore.TOPIC));
        partitions.addElectionListener(LogShareStateStore.TOPIC, shareStates);
        shareStates.awaitLoads(120_000);
        shareStateStore = new ClusterShareStateStore(shareStates, ClusterCoordinatorLocators.forTopic(controller,
                LogShareStateStore.TOPIC), config.nodeId(), 15_000, 50, interBrokerSecurity);
        shares = new ShareBroker(config.shareGroupConfig(), shareTopics, shareStateStore, timer,
                dev.millrace.delay.Time.SYSTEM);
        // share-group settings (group configs) live in the metadata log: applied from this node's image, now and at
        // every change (settings an earlier version kept in the share-state topic are moved there first)
        LegacyGroupConfigMigration.run(shareStates, controller, controllerClient, 30_000);
        ShareGroupConfigs groupSettings = shares.groupSettings();
        controller.registerListener((previous, current) -> {
            if (!previous.groupConfigs().equals(current.groupConfigs())) {
                groupSettings.update(current.appliedIndex(), current.groupConfigs());
            }
        });
        MetadataImage image = controller.image();
        groupSettings.update(image.appliedIndex(), image.groupConfigs());
        shares.setStateHandler(new ShareStateHandler(shareStates));
        partitions.addLeadershipListener(shares.partitions());
        purgatory.addAppendListener(shares::onAppend);
        partitions.addElectionListener(OffsetsTopic.NAME, shares.followGroupLeadership(
                InternalTopics.offsetsTopic(controller, partitions).partitionCount(),
                ClusterCoordinatorLocators.forTopic(controller, OffsetsTopic.NAME), config.nodeId(),
                interBrokerSecurity));
        kafkaApis.setShareBroker(shares);
        shares.transactions().setTransactions(new TxnShareJoin(config.nodeId(), ClusterCoordinatorLocators.forTopic(
                controller, TransactionStateTopic.NAME), txnStateTopic, transactionHandler::addSharePartition,
                shareRequests));
        markerWriter.setMarkerListener(shares.transactions()::onTransactionMarkers);
        kafkaApis.setShareOffsetsRouting(new ShareOffsetsRouting(config.nodeId(), controller::image, shares.admin(),
                shareRequests, 10_000));
        kafkaApis.setWriteTxnMarkersHandler(new WriteTxnMarkersHandler(markerWriter));
        kafkaApis.setScramAdminHandler(new ScramAdminHandler(controller, controllerClient));
        kafkaApis.setAclAdminHandler(new AclAdminHandler(controller, controllerClient));
        kafkaApis.setClientQuotaAdminHandler(new ClientQuotaAdminHandler(controller, controllerClient));
        RequestHandler served = config.authorizerEnabled() ? new AuthorizingApis(kafkaApis, new dev.millrace.broker
                .security.AclAuthorizer(() -> controller.image().acls(), dev.millrace.broker.security.AclAuthorizer
                .parseSuperUsers(config.superUsers()), config.allowEveryoneIfNoAclFound()), controller::image)
                : kafkaApis;
        // client quotas: applied from this node's metadata image, now and at every change
        long quotaWindowMs = config.quotaWindowSizeSeconds() * 1000L;
        clientQuotas = new ClientQuotaManager(time, config.quotaWindowNum(), quotaWindowMs);
        ClientQuotaManager quotas = clientQuotas;
        controller.registerListener((previous, current) -> {
            if (!previous.clientQuotas().equals(current.clientQuotas())) {
                quotas.update(current.clientQuotas());
            }
        });
        quotas.update(controller.image().clientQuotas());
        background.scheduleWithFixedDelay(quotas::purgeIdle, 30, 30, TimeUnit.SECONDS);
        apis.set(new ThrottlingApis(served, quotas, time, quotaWindowMs));
        maintenance.start(background, config.logMaintenanceIntervalMs());
        background.scheduleWithFixedDelay(purgatory::purgeCompleted, 10, 10, TimeUnit.SECONDS);
        background.scheduleWithFixedDelay(producePurgatory::purgeCompleted, 10, 10, TimeUnit.SECONDS);
        background.scheduleWithFixedDelay(replicationWaiters::purgeCompleted, 10, 10, TimeUnit.SECONDS);
        long isrCheckMs = partitions.replicaConfig().isrCheckIntervalMs();
        background.scheduleWithFixedDelay(partitions::maybeShrinkIsr, isrCheckMs, isrCheckMs, TimeUnit.MILLISECONDS);
        log.info("Broker {} of cluster {} started on {}", config.nodeId(), identity.clusterId(), boundAddress);
    }

    /** FindCoordinator over the leaders of the three coordinator topics. */
    private FindCoordinatorHandler findCoordinatorHandler(ClientEndpoints endpoints) {
        return new FindCoordinatorHandler(coordinators(OffsetsTopic.NAME), coordinators(TransactionStateTopic.NAME),
                coordinators(LogShareStateStore.TOPIC), endpoints);
    }

    private FindCoordinatorHandler.Coordinators coordinators(String topic) {
        return new FindCoordinatorHandler.Coordinators(controller.image().topic(topic).orElseThrow().partitions().size(),
                ClusterCoordinatorLocators.forTopic(controller, topic));
    }

    /** Waits until the quorum's metadata carries the cluster id (the first active controller commits it). */
    private String awaitClusterId() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (controller.image().clusterId() == null) {
            if (System.nanoTime() - deadline > 0) {
                throw new java.util.concurrent.TimeoutException("The metadata quorum committed no cluster id within "
                        + "60 s; is a majority of controller.quorum.voters running?");
            }
            Thread.sleep(20);
        }
        return controller.image().clusterId();
    }

    /**
     * The inter-broker listener's address (with the actual port when port 0 was configured): the only listener's
     * unless {@code listeners} names several.
     */
    public synchronized InetSocketAddress boundAddress() {
        return boundAddress;
    }

    /**
     * The first listener's connection counters (closes by reason, unexpected errors, buffered bytes), the only
     * listener unless {@code listeners} names several (each listener counts, and limits, its own); after start.
     */
    public synchronized NetworkStats networkStats() {
        return network.get(0).stats();
    }

    /** The address listener {@code name} (upper case, as in {@code listeners}) is bound to. */
    public synchronized InetSocketAddress boundAddress(String name) {
        InetSocketAddress address = boundAddresses.get(name);
        if (address == null) {
            throw new IllegalArgumentException("No listener " + name + "; listeners: " + boundAddresses.keySet());
        }
        return address;
    }

    public synchronized Controller controller() {
        return controller;
    }

    /** The partitions this broker hosts (for tests and tools that look at logs directly). */
    public synchronized PartitionManager partitionManager() {
        return partitions;
    }

    /** The durable delayed-delivery service. */
    public synchronized DelayedDeliveryService delayService() {
        return delays;
    }

    /** The client quotas in force and the clients' measured rates. */
    public synchronized ClientQuotaManager clientQuotas() {
        return clientQuotas;
    }

    /** The request router, for its per-API request counts. */
    public synchronized KafkaApis apis() {
        return kafkaApis;
    }

    /** Stops accepting requests, then closes the controller, timer and logs (flushing and checkpointing them). */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (lifecycle != null && !lifecycle.isFenced()) {
            // controlled shutdown: move this node's leaderships to other in-sync replicas before it stops serving
            try {
                lifecycle.controlledShutdown().get(config.brokerSessionTimeoutMs(), TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                log.warn("Broker {}: controlled shutdown did not finish, stopping anyway: {}", config.nodeId(),
                        e.toString());
            }
        }
        closeQuietly("broker lifecycle", lifecycle);
        for (KafkaServer listener : network) {
            closeQuietly("listener", listener);
        }
        for (BrokerListenerSecurity listener : security) {
            closeQuietly("listener security", listener);
        }
        if (requestExecutor != null) {
            requestExecutor.shutdown();
            awaitQuietly(requestExecutor);
        }
        closeQuietly("dead brokers' delivery rounds", deadBrokerRounds);
        closeQuietly("delay service", delays);
        closeQuietly("transaction coordinator", transactions);
        closeQuietly("transaction markers", txnMarkers);
        if (markerWakeups != null) {
            markerWakeups.shutdown();
            awaitQuietly(markerWakeups);
        }
        closeQuietly("group coordinator", groups);
        closeQuietly("share groups", shares);
        closeQuietly("share-state store", shareStateStore);
        closeQuietly("share offset requests", shareRequests);
        closeQuietly("share-state coordinator", shareStates);
        if (groupExecutor != null) {
            groupExecutor.shutdown();
            awaitQuietly(groupExecutor);
        }
        closeQuietly("timer", timer);
        closeQuietly("controller client", controllerClient);
        closeQuietly("controller client (lifecycle)", lifecycleClient);
        closeQuietly("controller", controller);
        closeQuietly("partition logs", partitions);
        closeQuietly("inter-broker security", interBrokerSecurity); // after every client of other nodes
        if (background != null) {
            background.shutdownNow();
        }
        log.info("Broker {} stopped", config.nodeId());
    }

    private static void awaitQuietly(ExecutorService executor) {
        try {
            executor.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(String what, AutoCloseable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (Exception e) {
            log.warn("Error closing the {}", what, e);
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
