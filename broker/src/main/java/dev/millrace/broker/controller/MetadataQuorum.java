package dev.millrace.broker.controller;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.alipay.sofa.jraft.CliService;
import com.alipay.sofa.jraft.Closure;
import com.alipay.sofa.jraft.Node;
import com.alipay.sofa.jraft.NodeManager;
import com.alipay.sofa.jraft.RaftGroupService;
import com.alipay.sofa.jraft.RaftServiceFactory;
import com.alipay.sofa.jraft.Status;
import com.alipay.sofa.jraft.closure.ReadIndexClosure;
import com.alipay.sofa.jraft.conf.Configuration;
import com.alipay.sofa.jraft.core.NodeImpl;
import com.alipay.sofa.jraft.entity.PeerId;
import com.alipay.sofa.jraft.entity.Task;
import com.alipay.sofa.jraft.error.RaftError;
import com.alipay.sofa.jraft.option.CliOptions;
import com.alipay.sofa.jraft.option.NodeOptions;
import com.alipay.sofa.jraft.rpc.RaftRpcServerFactory;
import com.alipay.sofa.jraft.rpc.RpcServer;
import com.alipay.sofa.jraft.rpc.impl.BoltRpcServer;

/**
 * This node's SOFAJRaft node, a voter or a learner of the metadata group: wires the {@link MetadataStateMachine} into a raft group over a bolt
 * RPC server, starts it, and offers the few quorum operations the controller needs.
 *
 * <p>Layout under {@code dataDir}: {@code log/} (RocksDB raft log), {@code raft_meta/} (term and
 * vote), {@code snapshot/} (jraft snapshot directories, each holding {@value MetadataSnapshotFile#FILE_NAME}).
 *
 * <p>jraft facts this class relies on:
 * <ul>
 *   <li>The RPC server binds only {@code host:port} (a bolt server built on that address); jraft's
 *       default server would bind every interface.</li>
 *   <li>The voter set ({@code voters}) is the initial configuration, used only while the raft log is
 *       empty; afterwards membership comes from the log (each leader commits a configuration entry at
 *       the start of its term, and snapshots keep the configuration they were taken at), which is why a
 *       voter's address must not change. {@code NodeImpl.getCurrentConf()} shows that configuration:
 *       {@link #start} compares it with the configured voters right after the node starts (what this
 *       voter's own log and snapshot hold) and again once caught up with the leader (what the leader
 *       committed), and fails naming {@value ControllerConfig#VOTERS_SETTING} and both lists when they
 *       differ, rather than run a quorum whose members disagree on who votes.</li>
 *   <li>A one-voter group elects itself at once; with more voters the election timeout is randomised
 *       within [timeout, 2 x timeout).</li>
 *   <li>The voters are static. Learners are not: jraft keeps them in the configuration beside the
 *       voters (replicated by the leader like followers, never counted in a quorum, never starting an
 *       election: a node not among the configuration's peers does not even pre-vote). A learner
 *       ({@link ControllerConfig#isLearner()}) starts its node with the voters plus itself as learner,
 *       then asks the leader to add it through jraft's CLI service ({@code addLearners}; adding a
 *       learner that is already in the configuration succeeds at once, so a restarted learner asks
 *       again harmlessly), retried every {@value #JOIN_RETRY_MS} ms until the start timeout, which fails
 *       naming {@value ControllerConfig#VOTERS_SETTING}. It learns the leader from the leader's own
 *       append-entries, so {@link #leaderAddress()} works on it as on a voter; its read-index barrier is
 *       served by the leader (jraft accepts read-index requests from learners in the configuration).
 *       For that, the CLI service is enabled on every node; it answers only on the quorum port, which
 *       must be reachable by cluster members only.</li>
 *   <li>A learner stays in the configuration when its node stops or is removed: the leader keeps a
 *       replicator that retries it (log noise, no effect on commits or elections), and the same node
 *       id and address find their place again on restart. Nothing removes it today.</li>
 * </ul>
 *
 * <p>{@link #start} binds the port first (so a port in use fails before any raft state is opened),
 * then starts the node and blocks until a leader is known and this voter's state machine has applied
 * everything committed before: a read-index barrier, retried every {@value #READ_BARRIER_RETRY_MS} ms
 * while the new leader has not yet committed an entry in its term. {@link #close} during that wait
 * makes {@code start} fail at once.
 *
 * <p>Thread-safe: starting the node and closing are serialised; the other operations may be called
 * from any thread.
 */
final class MetadataQuorum implements AutoCloseable {

    static final String GROUP_ID = "millrace-metadata";
    static final String BOLT_LOG_DISABLE_PROPERTY = "sofa.middleware.log.disable";

    private static final Logger LOG = LoggerFactory.getLogger(MetadataQuorum.class);
    private static final long READ_BARRIER_RETRY_MS = 20;
    /** Start-timeout windows a start may take while the node keeps applying the metadata log ({@link ProgressDeadline}). */
    static final int START_WINDOWS = 10;
    private static final long JOIN_RETRY_MS = 200;
    private static final int JOIN_RPC_TIMEOUT_MS = 2_000;
    /** How long a leader may wait for its term's start before {@link LeaderStartWatchdog} reports it. */
    private static final long LEADER_START_REPORT_MS = 3_000;

    private final ControllerConfig config;
    private final MetadataStateMachine stateMachine;
    private final String logPrefix;

    private final CompletableFuture<Void> closedSignal = new CompletableFuture<>();
    private final LeaderStartWatchdog watchdog;

    private RaftGroupService groupService;
    private volatile Node node;
    private volatile boolean closed;

    MetadataQuorum(ControllerConfig config, MetadataStateMachine stateMachine, String logPrefix) {
        this.config = config;
        this.stateMachine = stateMachine;
        this.logPrefix = logPrefix;
        this.watchdog = new LeaderStartWatchdog(() -> node, stateMachine::leaderTerm,
                () -> TimeUnit.NANOSECONDS.toMillis(System.nanoTime()), LEADER_START_REPORT_MS, logPrefix);
    }

    void start() throws IOException, TimeoutException, InterruptedException {
        long startNs = System.nanoTime();
        ProgressDeadline deadline = new ProgressDeadline(config.startTimeout().toNanos(), START_WINDOWS,
                () -> stateMachine.image().appliedIndex(), System::nanoTime);
        startNode();
        watchdog.start();
        try {
            checkVoters("its raft log");
            if (config.isLearner()) {
                joinAsLearner(deadline);
            }
            awaitLeader(deadline);
            long index = awaitCaughtUp(deadline);
            checkVoters("the leader's committed configuration");
            LOG.info("{}Quorum {} started in {} ms; leader {}, caught up to index {}", logPrefix,
                    config.isLearner() ? "learner" : "voter",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs), leaderAddress().orElse("?"), index);
        } catch (TimeoutException | InterruptedException | RuntimeException e) {
            close();
            throw e;
        }
    }

    private synchronized void startNode() throws IOException {
        if (closed || groupService != null) {
            throw new IllegalStateException(logPrefix + "the quorum node can start only once");
        }
        disableBoltFileLogging();
        JraftSignalGuard.install();
        Files.createDirectories(config.dataDir());
        com.alipay.remoting.rpc.RpcServer boltServer = new com.alipay.remoting.rpc.RpcServer(config.host(),
                config.port(), true);
        if (config.quorumTls() != null) {
            config.quorumTls().configureServer(boltServer);
        }
        RpcServer rpcServer = new BoltRpcServer(boltServer);
        RaftRpcServerFactory.addRaftRequestProcessors(rpcServer);
        bind(rpcServer);
        PeerId self = new PeerId(config.host(), config.port());
        groupService = new RaftGroupService(GROUP_ID, self, nodeOptions(), rpcServer);
        try {
            node = groupService.start(false);
        } catch (RuntimeException e) {
            rpcServer.shutdown();
            NodeManager.getInstance().removeAddress(self.getEndpoint());
            groupService = null;
            markClosed();
            throw new IOException(logPrefix + "cannot start the quorum node at " + config.address() + " with data in "
                    + config.dataDir() + " (is another process using it?): " + e.getMessage(), e);
        }
    }

    /**
     * Fails when the quorum's configuration (as this node knows it from {@code source}) is not the
     * configured voter set.
     */
    private void checkVoters(String source) {
        Node current = node;
        if (!(current instanceof NodeImpl impl)) {
            return;
        }
        Configuration conf = impl.getCurrentConf();
        if (conf == null || conf.isEmpty()) {
            return;
        }
        Set<String> committed = new TreeSet<>();
        conf.getPeers().forEach(peer -> committed.add(peer.getEndpoint().toString()));
        Set<String> configured = new TreeSet<>(config.voters().values());
        if (!committed.equals(configured)) {
            throw new IllegalStateException(logPrefix + "Invalid controller config: " + ControllerConfig.VOTERS_SETTING
                    + " is " + config.votersText() + " (voters " + configured + ") but the quorum's configuration in "
                    + source + " (data directory " + config.dataDir() + ") has voters " + committed
                    + "; every voter must be started with the same " + ControllerConfig.VOTERS_SETTING);
        }
    }

    /**
     * Asks the leader, through the voters' CLI service, to add this node as a learner; retries until it
     * succeeds (also when it already is one) or the start deadline passes.
     */
    private void joinAsLearner(ProgressDeadline deadline) throws TimeoutException, InterruptedException {
        PeerId self = new PeerId(config.host(), config.port());
        CliOptions options = new TlsCliOptions(config.quorumTls());
        options.setTimeoutMs(JOIN_RPC_TIMEOUT_MS);
        options.setMaxRetry(0);
        CliService cli = RaftServiceFactory.createAndInitCliService(options);
        String lastFailure = "none";
        try {
            while (deadline.remainingNs() > 0) {
                checkNotClosed();
                Status status = cli.addLearners(GROUP_ID, votersConfiguration(), List.of(self));
                if (status.isOk()) {
                    LOG.info("{}Joined the metadata quorum as learner {}", logPrefix, self);
                    return;
                }
                lastFailure = status.toString();
                LOG.debug("{}Joining as learner failed, retrying: {}", logPrefix, status);
                TimeUnit.MILLISECONDS.sleep(Math.min(JOIN_RETRY_MS,
                        TimeUnit.NANOSECONDS.toMillis(deadline.remainingNs()) + 1));
            }
        } finally {
            cli.shutdown();
        }
        throw new TimeoutException(logPrefix + "node " + config.nodeId() + " is not in "
                + ControllerConfig.VOTERS_SETTING + " (" + config.votersText() + "), so it joins the metadata quorum "
                + "as a learner, but no leader among those voters added it within " + config.startTimeout().toMillis()
                + " ms (last answer: " + lastFailure + "); a majority of the voters must be running and reachable");
    }

    /**
     * Appends one entry if this node is still leader in {@code expectedTerm}; {@code done} runs once
     * with the outcome (see {@link ProposalClosure}).
     */
    void propose(byte[] data, long expectedTerm, Closure done) {
        Node current = node;
        if (current == null) {
            done.run(new Status(RaftError.ENODESHUTDOWN, "The quorum node is not running"));
            return;
        }
        current.apply(new Task(ByteBuffer.wrap(data), done, expectedTerm));
    }

    /** Takes a snapshot of the state machine now; completes when it is saved. */
    CompletableFuture<Void> snapshot() {
        CompletableFuture<Void> saved = new CompletableFuture<>();
        Node current = node;
        if (current == null) {
            saved.completeExceptionally(new IllegalStateException(logPrefix + "the quorum node is not running"));
            return saved;
        }
        current.snapshot(status -> {
            if (status.isOk()) {
                saved.complete(null);
            } else {
                saved.completeExceptionally(new IOException(logPrefix + "snapshot failed: " + status));
            }
        });
        return saved;
    }

    /** The running quorum node, or null before the start and after the close. */
    Node node() {
        return node;
    }

    /** The current leader's {@code host:port}, if one is known. */
    Optional<String> leaderAddress() {
        Node current = node;
        PeerId leader = current == null ? null : current.getLeaderId();
        if (leader == null || leader.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(leader.getEndpoint().toString());
    }

    /** Stops the node and its RPC server and waits until the raft log is closed. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed && groupService == null) {
            return;
        }
        markClosed();
        watchdog.close();
        node = null;
        if (groupService == null) {
            return;
        }
        RaftGroupService stopping = groupService;
        groupService = null;
        stopping.shutdown();
        try {
            stopping.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LOG.info("{}Quorum node stopped", logPrefix);
    }

    /**
     * Binds the RPC server before the node exists, so a port in use fails cleanly; the group service
     * is then started without starting the server again (jraft logs a WARN saying so).
     */
    private void bind(RpcServer rpcServer) throws IOException {
        boolean bound;
        try {
            bound = rpcServer.init(null);
        } catch (RuntimeException e) {
            markClosed();
            throw new IOException(logPrefix + "cannot bind the quorum port " + config.address() + ": "
                    + rootMessage(e), e);
        }
        if (!bound) {
            markClosed();
            throw new IOException(logPrefix + "cannot bind the quorum port " + config.address());
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? root.toString() : root.getMessage();
    }

    private void markClosed() {
        closed = true;
        closedSignal.complete(null);
    }

    private Configuration votersConfiguration() {
        Configuration voters = new Configuration();
        for (String voter : config.voters().values()) {
            PeerId peer = PeerId.parsePeer(voter);
            if (peer == null) {
                throw new IllegalArgumentException(logPrefix + "voter '" + voter + "' is not host:port");
            }
            voters.addPeer(peer);
        }
        return voters;
    }

    private NodeOptions nodeOptions() {
        Configuration voters = votersConfiguration();
        if (config.isLearner()) {
            voters.addLearner(new PeerId(config.host(), config.port()));
        }
        int electionTimeoutMs = (int) config.electionTimeout().toMillis();
        NodeOptions options = new TlsNodeOptions(config.quorumTls());
        options.setFsm(stateMachine);
        options.setInitialConf(voters);
        options.setElectionTimeoutMs(electionTimeoutMs);
        options.getRaftOptions().setMaxElectionDelayMs(electionTimeoutMs);
        options.setSnapshotIntervalSecs((int) Math.max(1, config.snapshotInterval().toSeconds()));
        options.setLogUri(config.dataDir().resolve("log").toString());
        options.setRaftMetaUri(config.dataDir().resolve("raft_meta").toString());
        options.setSnapshotUri(config.dataDir().resolve("snapshot").toString());
        options.setDisableCli(false);
        return options;
    }

    private void awaitLeader(ProgressDeadline deadline) throws TimeoutException, InterruptedException {
        try {
            CompletableFuture<Object> known = CompletableFuture.anyOf(stateMachine.leaderKnown(), closedSignal);
            while (true) {
                try {
                    known.get(Math.max(1, deadline.remainingNs()), TimeUnit.NANOSECONDS);
                    break;
                } catch (TimeoutException e) {
                    if (deadline.remainingNs() == 0) {
                        throw e;
                    }
                }
            }
        } catch (TimeoutException e) {
            throw new TimeoutException(logPrefix + "no controller leader was elected within "
                    + config.startTimeout().toMillis() + " ms among voters " + config.voters().values()
                    + "; a majority of them must be running and reachable");
        } catch (ExecutionException e) {
            throw new IllegalStateException(logPrefix + "waiting for a leader failed", e.getCause());
        }
        checkNotClosed();
    }

    private void checkNotClosed() {
        if (closed) {
            throw new IllegalStateException(logPrefix + "the quorum node was closed while starting");
        }
    }

    /** Waits until this voter has applied every entry committed before now; returns that index. */
    private long awaitCaughtUp(ProgressDeadline deadline) throws TimeoutException, InterruptedException {
        String lastFailure = "none";
        while (deadline.remainingNs() > 0) {
            checkNotClosed();
            CompletableFuture<Long> barrier = readBarrier();
            try {
                return barrier.get(Math.max(1, deadline.remainingNs()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                lastFailure = e.getCause().getMessage();
                TimeUnit.MILLISECONDS.sleep(Math.min(READ_BARRIER_RETRY_MS,
                        TimeUnit.NANOSECONDS.toMillis(deadline.remainingNs()) + 1));
            } catch (TimeoutException e) {
                lastFailure = "no answer within the time left";
            }
        }
        throw new TimeoutException(logPrefix + "the controller did not catch up with the quorum log: it applied "
                + "no entry for " + config.startTimeout().toMillis() + " ms, or kept applying for " + START_WINDOWS
                + " times that (applied index " + stateMachine.image().appliedIndex() + ", leader "
                + leaderAddress().orElse("unknown") + ", last read-index failure: " + lastFailure + ")");
    }

    private CompletableFuture<Long> readBarrier() {
        CompletableFuture<Long> applied = new CompletableFuture<>();
        Node current = node;
        if (current == null) {
            applied.completeExceptionally(new IOException("the quorum node is not running"));
            return applied;
        }
        current.readIndex(new byte[0], new ReadIndexClosure() {
            @Override
            public void run(Status status, long index, byte[] context) {
                if (status.isOk()) {
                    applied.complete(index);
                } else {
                    applied.completeExceptionally(new IOException(status.toString()));
                }
            }
        });
        return applied;
    }

    /**
     * SOFABolt logs through sofa-common-tools, which by default writes its own log files under
     * {@code ~/logs}. This property makes it log nowhere; it is read when bolt creates its first
     * logger, so it is set here, before this node touches bolt, and not in a static initialiser.
     * An explicit {@code -Dsofa.middleware.log.disable=false} is respected.
     */
    private static void disableBoltFileLogging() {
        if (System.getProperty(BOLT_LOG_DISABLE_PROPERTY) == null) {
            System.setProperty(BOLT_LOG_DISABLE_PROPERTY, "true");
        }
    }

    /** SOFAJRaft's node options with the quorum's TLS settings for {@link QuorumRpcFactory}; null: PLAINTEXT. */
    private static final class TlsNodeOptions extends NodeOptions implements QuorumTls.Carrier {
        private final QuorumTls tls;

        TlsNodeOptions(QuorumTls tls) {
            this.tls = tls;
        }

        @Override
        public QuorumTls quorumTls() {
            return tls;
        }
    }

    /** SOFAJRaft's CLI options with the quorum's TLS settings for {@link QuorumRpcFactory}; null: PLAINTEXT. */
    private static final class TlsCliOptions extends CliOptions implements QuorumTls.Carrier {
        private final QuorumTls tls;

        TlsCliOptions(QuorumTls tls) {
            this.tls = tls;
        }

        @Override
        public QuorumTls quorumTls() {
            return tls;
        }
    }
}
