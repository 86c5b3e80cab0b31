package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.network.NetworkStats;

/**
 * Seeded fuzzing of the Kafka listener: at least {@code millrace.fuzz.frames} generated frames (100,000 by default,
 * 10 million with {@code -Pfuzz}) over many connections from two client threads, each connection's frames a
 * {@link FrameFuzzer} plan, against one broker on loopback, while a well-behaved kafka-clients producer and consumer
 * run rounds on the same broker. Checks:
 *
 * <ul>
 *   <li>the broker never dies and keeps serving: every connection gets its sentinel's response or is closed by the
 *       broker within {@value #READ_TIMEOUT_MS} ms (a request slot left stuck fails it);
 *   <li>no exception reaches a connection handler ({@link NetworkStats#unexpectedErrors()} stays 0) and no handler
 *       fails other than with a Kafka error ({@link NetworkStats#handlerFailures()} stays 0);
 *   <li>memory stays bounded: heap in use after a full GC, before and after, within {@value #HEAP_MARGIN_MB} MiB;
 *   <li>the well-behaved client never sees an error and completes rounds throughout.
 * </ul>
 *
 * The seed is {@code -Dmillrace.fuzz.seed}: the default build sets a fixed one (broker/pom.xml: the default run is a
 * repeatable regression check that does not turn red on a new seed), {@code -Pfuzz} or {@code random} draw a new one
 * each run. It is printed at the start and in every failure, and
 * the same seed replays the same frames on every connection (which connection a thread runs varies).
 */
class HostileInputFuzzIntegrationTest {

    private static final int READ_TIMEOUT_MS = 30_000;
    private static final int HEAP_MARGIN_MB = 64;
    private static final int MAX_REQUEST_BYTES = 1024 * 1024;
    private static final int CLIENT_THREADS = 2;

    @TempDir
    Path dataDir;

    private final long seed = seed(System.getProperty("millrace.fuzz.seed"));
    private final long targetFrames = Long.getLong("millrace.fuzz.frames", 100_000);
    private final AtomicLong frames = new AtomicLong();
    private final AtomicLong connections = new AtomicLong();
    private final AtomicLongArray kinds = new AtomicLongArray(FrameFuzzer.Kind.values().length);
    private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();

    @Test
    @Timeout(value = 6, unit = TimeUnit.HOURS) // the real bound is assertTimeoutPreemptively's, scaled to the frames
    void shouldSurviveFuzzedFramesAndKeepServingAWellBehavedClient() throws Exception {
        System.out.println("HostileInputFuzzIntegrationTest: seed " + seed + " (-Dmillrace.fuzz.seed=" + seed
                + " replays), " + targetFrames + " frames");
        Duration budget = Duration.ofSeconds(180).plusMillis(targetFrames * 2);
        assertTimeoutPreemptively(budget, this::fuzz, () -> "fuzzing did not finish in " + budget + "; seed " + seed);
    }

    private void fuzz() throws Exception {
        BrokerServer broker = TestBrokers.start(dataDir, Map.of("auto.create.topics.enable", "false",
                "socket.request.max.bytes", String.valueOf(MAX_REQUEST_BYTES), "log.maintenance.interval.ms", "5000"));
        try {
            String bootstrap = TestBrokers.bootstrap(broker);
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
                // retention keeps a long run's disk use bounded: fuzzed produce requests append for real
                admin.createTopics(List.of(new NewTopic(FrameFuzzer.TOPIC, 3, (short) 1).configs(Map.of(
                                "segment.bytes", String.valueOf(1 << 20), "retention.bytes", String.valueOf(8 << 20))),
                        new NewTopic("well-behaved", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
            NetworkStats stats = broker.networkStats();
            try (WellBehavedClient client = new WellBehavedClient(bootstrap, "well-behaved")) {
                client.roundTrip(5);
                long heapBefore = usedHeapAfterGc();
                client.startBackground();
                long start = System.nanoTime();
                ExecutorService workers = Executors.newFixedThreadPool(CLIENT_THREADS);
                try {
                    List<Future<?>> running = new ArrayList<>();
                    for (int i = 0; i < CLIENT_THREADS; i++) {
                        running.add(workers.submit(() -> runConnections(broker.boundAddress())));
                    }
                    for (Future<?> worker : running) {
                        worker.get();
                    }
                } finally {
                    workers.shutdownNow();
                }
                long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertThat(client.awaitMoreRounds(2, 60_000)).as("the well-behaved client is still served; seed %d: %s",
                        seed, client.failure()).isTrue();
                awaitOpenConnectionsAtMost(stats, 8);
                long heapAfter = usedHeapAfterGc();
                Map<FrameFuzzer.Kind, Long> byKind = new EnumMap<>(FrameFuzzer.Kind.class);
                for (FrameFuzzer.Kind kind : FrameFuzzer.Kind.values()) {
                    byKind.put(kind, kinds.get(kind.ordinal()));
                }
                System.out.printf("HostileInputFuzzIntegrationTest: seed %d: %d frames over %d connections in %d ms "
                        + "(%s); well-behaved rounds %d; heap %d -> %d MiB; %s%n", seed, frames.get(),
                        connections.get(), elapsedMs, byKind, client.rounds(), heapBefore >> 20, heapAfter >> 20, stats);
                assertThat(failures).as("connections that failed; seed %d", seed).isEmpty();
                assertThat(frames.get()).isGreaterThanOrEqualTo(targetFrames);
                assertThat(client.failure()).as("the well-behaved client's error; seed %d", seed).isNull();
                assertThat(stats.unexpectedErrors()).as("exceptions that reached a handler; seed %d", seed).isZero();
                assertThat(stats.handlerFailures()).as("requests answered UNKNOWN_SERVER_ERROR; seed %d", seed)
                        .isZero();
                assertThat((heapAfter - heapBefore) >> 20).as("heap growth in MiB; seed %d", seed)
                        .isLessThan(HEAP_MARGIN_MB);
            }
        } finally {
            broker.close();
        }
    }

    /** One client thread: connection after connection until the frame target is reached. */
    private void runConnections(InetSocketAddress broker) {
        while (frames.get() < targetFrames && failures.size() < 10) {
            long index = connections.getAndIncrement();
            FrameFuzzer.Plan plan = new FrameFuzzer(seed, index, KafkaApis.VERSIONS, MAX_REQUEST_BYTES).plan();
            try {
                runConnection(broker, plan);
            } catch (IOException | RuntimeException e) {
                failures.add("connection " + index + " (seed " + seed + "): " + e);
            }
            frames.addAndGet(plan.kinds().size());
            for (FrameFuzzer.Kind kind : plan.kinds()) {
                kinds.incrementAndGet(kind.ordinal());
            }
        }
    }

    private void runConnection(InetSocketAddress broker, FrameFuzzer.Plan plan) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(broker, READ_TIMEOUT_MS);
            socket.setSoTimeout(READ_TIMEOUT_MS);
            socket.setTcpNoDelay(true);
            OutputStream out = socket.getOutputStream();
            try {
                for (byte[] frame : plan.frames()) {
                    out.write(frame);
                }
                out.flush();
            } catch (SocketException closedMeanwhile) {
                return; // the broker closed on an earlier frame while these were being written
            }
            if (plan.terminal()) {
                return; // a lying size prefix: the client hangs up
            }
            DataInputStream in = new DataInputStream(socket.getInputStream());
            try {
                while (true) {
                    int size = in.readInt();
                    if (size < 4) {
                        throw new IOException("a response frame of " + size + " bytes");
                    }
                    int correlationId = in.readInt();
                    in.skipNBytes(size - 4);
                    if (correlationId == plan.sentinelCorrelationId()) {
                        return;
                    }
                }
            } catch (EOFException | SocketException closedByBroker) {
                // the broker closed the connection on a bad frame: what it should do
            } catch (SocketTimeoutException stuck) {
                throw new IOException("neither the sentinel's response nor a close within " + READ_TIMEOUT_MS
                        + " ms: a request slot is stuck; kinds " + plan.kinds());
            }
        }
    }

    private static void awaitOpenConnectionsAtMost(NetworkStats stats, long open) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (stats.openConnections() > open && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        assertThat(stats.openConnections()).as("connections left open").isLessThanOrEqualTo(open);
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** {@code property} as a seed; a new random seed when it is absent, blank or {@code random}. */
    private static long seed(String property) {
        if (property == null || property.isBlank() || property.equals("random")) {
            return System.nanoTime() ^ System.currentTimeMillis();
        }
        return Long.parseLong(property.trim());
    }
}
