package dev.millrace.ra.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.as.arquillian.container.ManagementClient;
import org.jboss.dmr.ModelNode;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.ResourceAdapterArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.millrace.ra.it.bench.ArtemisBenchMdb;
import dev.millrace.ra.it.bench.BenchRecorder;
import dev.millrace.ra.it.bench.BenchSender;
import dev.millrace.ra.it.bench.BenchServlet;
import dev.millrace.ra.it.bench.MillraceBenchMdb;

/**
 * Issue 25's benchmark: message-driven beans on the Millrace resource adapter against WildFly's own messaging
 * (ActiveMQ Artemis, the {@code messaging-activemq} subsystem of {@code standalone-full}), in one
 * WildFly, one run. Not a test of the default build: it runs only with {@code -Pmdb-bench} (ra/pom.xml), which
 * prints and writes ({@code ra/target/mdb-bench.md}) one table: Millrace, Artemis, ratio.
 *
 * <p>The set-up, decided here:
 * <ul>
 *   <li>One WildFly 38 {@code standalone-full} (a copy of its configuration made fresh by the profile,
 *       {@code standalone-full-mdb-bench.xml}; port offset 300, so it never meets the default suites' server),
 *       {@code -Xms1g -Xmx1g -XX:+AlwaysPreTouch}; the Millrace broker in the test JVM on loopback
 *       ({@link MillraceBrokerExtension}, its defaults: no fsync per append, like Kafka). Artemis keeps WildFly's
 *       defaults (but the benchmark queue's memory, below), which sync its journal on every commit: the two do not
 *       promise the same durability against a power cut (both survive a killed process).</li>
 *   <li>One application, two MDBs, each container-managed (Required), {@code maxSession}=15, persistent messages:
 *       {@link MillraceBenchMdb} bound to {@code millrace-ra.rar} ({@code jboss-ejb3.xml}), {@link ArtemisBenchMdb}
 *       to {@code activemq-ra} (the server's default here). Both draw from one bean-instance pool of 15
 *       ({@code mdb-bench-pool}: the default MDB pool holds 4 per CPU, 8 here, which would cap both at 8
 *       sessions). Both start with delivery stopped ({@code jboss-ejb3.xml}); the test starts and stops each
 *       bean's delivery with the ejb3 subsystem's {@code start-delivery}/{@code stop-delivery}, so only the side
 *       being measured consumes.</li>
 *   <li>Senders in the server ({@link BenchSender}), through each side's pooled connection factory, the same way
 *       for both; the send time is the server JVM's {@code nanoTime}, like the MDB's.</li>
 *   <li>Warm-up: each side fills and drains {@code bench.mdb.warmup} messages (20,000) per round, until the JIT
 *       compilers have settled: a round in which neither JVM (the server's, read through its {@code platform-mbean}
 *       resource, and the test JVM, which runs the Millrace broker) spent more than
 *       {@code bench.mdb.warmup.jitShare} (5%) of the round's time compiling, or {@code bench.mdb.warmup.rounds}
 *       (12) rounds. With one fixed round of 20,000 the compilers of both JVMs still took about a third of both cores
 *       in the measured drain: on two cores one C2 thread per JVM works through a long queue, and a method compiled
 *       with profiling (C1) in the warm-up got its optimised (C2) version only in the measured round. The rounds each
 *       side took and the compile time of its last round are reported.</li>
 *   <li>Throughput: the queue is filled with {@code bench.mdb.messages} messages (20,000) while the MDB's
 *       delivery is stopped (transactions of 500), then delivery starts: messages per second from the first
 *       {@code onMessage} to the last (the activation's own start, before the first delivery, is not counted).
 *       {@code standalone-full} lets an Artemis address hold 10 MiB in memory and pages the rest to disk: these
 *       messages count about 1.1 KiB each there, so it paged from the 9,388th ({@code AMQ222038} in
 *       {@code server.log}). Paging is Artemis's default, but it would measure paging rather than MDB delivery, so
 *       the benchmark queue's address gets 128 MiB ({@code address-setting}, nothing else changed): Artemis's
 *       better case.</li>
 *   <li>Latency: delivery on, {@code bench.mdb.latency.warmup} messages at {@code bench.mdb.rate} per second,
 *       then {@code bench.mdb.latency.messages} more at that rate, each sent on its own outside a transaction, by
 *       {@code bench.mdb.senders} threads sharing one schedule (one thread could not hold 500 msgs/s on Artemis,
 *       whose every persistent send waits for its journal's fsync); p50/p99/max from just before {@code send} to the
 *       start of {@code onMessage}.</li>
 *   <li>Order: each phase runs Millrace then Artemis, or Artemis first with {@code -Dbench.mdb.artemisFirst=true}.</li>
 * </ul>
 * Every round must see every message it sent (nothing lost); the targets (Millrace at least 1.5x Artemis's
 * throughput, p99 at most Artemis's) are reported, not asserted.
 */
@ExtendWith({MillraceBrokerExtension.class, ArquillianExtension.class})
@RunAsClient
class WildFlyMdbBench {

    private static final String APP = "mdb-bench.war";
    private static final String POOL = "mdb-bench-pool";
    private static final int FILL_BATCH = 500;
    private static final long ARTEMIS_QUEUE_MAX_BYTES = 128L << 20;

    private final int warmup = Integer.getInteger("bench.mdb.warmup", 20_000);
    private final int warmupRounds = Integer.getInteger("bench.mdb.warmup.rounds", 12);
    private final double warmupJitShare = Double.parseDouble(System.getProperty("bench.mdb.warmup.jitShare", "0.05"));
    private final int messages = Integer.getInteger("bench.mdb.messages", 20_000);
    private final int rate = Integer.getInteger("bench.mdb.rate", 500);
    private final int latencyWarmup = Integer.getInteger("bench.mdb.latency.warmup", 2_000);
    private final int latencyMessages = Integer.getInteger("bench.mdb.latency.messages", 10_000);
    private final int senders = Integer.getInteger("bench.mdb.senders", 4);
    private final boolean artemisFirst = Boolean.getBoolean("bench.mdb.artemisFirst");

    private final HttpClient http = HttpClient.newHttpClient();

    @ArquillianResource
    private Deployer deployer;

    @ArquillianResource
    private ManagementClient management;

    @Deployment(name = "rar", order = 1, testable = false)
    static ResourceAdapterArchive rar() {
        return ResourceAdapterScenarios.builtRar();
    }

    @Deployment(name = "app", managed = false, testable = false)
    static WebArchive app() {
        return ShrinkWrap.create(WebArchive.class, APP)
                .addClasses(MillraceBenchMdb.class, ArtemisBenchMdb.class, BenchRecorder.class, BenchSender.class,
                        BenchServlet.class)
                .addAsWebInfResource(new StringAsset(jbossEjb3Xml()), "jboss-ejb3.xml");
    }

    /** Binds the Millrace bean to the adapter, both beans to the pool of 15, and starts both with delivery off. */
    private static String jbossEjb3Xml() {
        StringBuilder xml = new StringBuilder("""
                <?xml version="1.0" encoding="UTF-8"?>
                <jboss:ejb-jar xmlns:jboss="urn:jboss:jakartaee:1.0" xmlns="https://jakarta.ee/xml/ns/jakartaee"
                               xmlns:mdb="urn:resource-adapter-binding:2.0" xmlns:d="urn:delivery-active:2.0"
                               xmlns:p="urn:ejb-pool:2.0" version="4.0" impl-version="2.0">
                    <assembly-descriptor>
                        <mdb:resource-adapter-binding>
                            <ejb-name>MillraceBenchMdb</ejb-name>
                            <mdb:resource-adapter-name>millrace-ra.rar</mdb:resource-adapter-name>
                        </mdb:resource-adapter-binding>
                """);
        for (String bean : List.of("MillraceBenchMdb", "ArtemisBenchMdb")) {
            xml.append("""
                        <d:delivery>
                            <ejb-name>%1$s</ejb-name>
                            <d:active>false</d:active>
                        </d:delivery>
                        <p:pool>
                            <ejb-name>%1$s</ejb-name>
                            <p:bean-instance-pool-ref>%2$s</p:bean-instance-pool-ref>
                        </p:pool>
                """.formatted(bean, POOL));
        }
        return xml.append("""
                    </assembly-descriptor>
                </jboss:ejb-jar>
                """).toString();
    }

    @Test
    @Timeout(1800)
    void shouldMeasureMdbThroughputAndLatencyOfMillraceAgainstArtemis() throws Exception {
        prepareServer();
        deployer.deploy("app");
        try {
            List<String> sides = artemisFirst ? List.of("artemis", "millrace") : List.of("millrace", "artemis");
            Map<String, String> warmups = new LinkedHashMap<>();
            for (String side : sides) {
                progress("warm-up", side, "start");
                warmups.put(side, warmUp(side));
            }
            Map<String, Map<String, String>> throughput = new LinkedHashMap<>();
            for (String side : sides) {
                progress("throughput", side, "start");
                throughput.put(side, drain(side, messages));
                progress("throughput", side, "end");
            }
            Map<String, Map<String, String>> latency = new LinkedHashMap<>();
            for (String side : sides) {
                progress("latency", side, "start");
                latency.put(side, atFixedRate(side));
                progress("latency", side, "end");
            }
            report(sides, throughput, latency, warmups);
        } finally {
            deployer.undeploy("app");
        }
    }

    /** The pool of 15 for both beans, the Artemis queue and its address setting, created unless there; emptied. */
    private void prepareServer() throws IOException {
        ModelNode pool = address("subsystem", "ejb3", "strict-max-bean-instance-pool", POOL);
        if (!exists(pool)) {
            ModelNode add = operation("add", pool);
            add.get("max-pool-size").set(15);
            execute(add);
        }
        ModelNode setting = address("subsystem", "messaging-activemq", "server", "default",
                "address-setting", "jms.queue." + ArtemisBenchMdb.QUEUE_NAME);
        if (!exists(setting)) {
            ModelNode add = operation("add", setting);
            add.get("max-size-bytes").set(ARTEMIS_QUEUE_MAX_BYTES);
            execute(add);
        }
        ModelNode queue = address("subsystem", "messaging-activemq", "server", "default",
                "jms-queue", ArtemisBenchMdb.QUEUE_NAME);
        if (!exists(queue)) {
            ModelNode add = operation("add", queue);
            add.get("entries").add(ArtemisBenchMdb.QUEUE_JNDI);
            execute(add);
        }
        execute(operation("remove-messages", queue));
    }

    /**
     * Fills {@code side}'s queue with {@code count} messages while its MDB's delivery is stopped, then starts
     * delivery and waits for all of them; delivery is stopped again after.
     */
    private Map<String, String> drain(String side, int count) throws Exception {
        call("reset", "side=" + side + "&expected=" + count);
        call("fill", "side=" + side + "&count=" + count + "&batch=" + FILL_BATCH);
        delivery(side, "start-delivery");
        try {
            Map<String, String> round = parse(call("await", "side=" + side + "&timeoutMs=600000"));
            assertThat(round.get("count")).as(side + " drained " + round).isEqualTo(String.valueOf(count));
            return round;
        } finally {
            delivery(side, "stop-delivery");
        }
    }

    /**
     * Warm-up rounds of {@link #warmup} messages until a round's compile time in each JVM is under
     * {@link #warmupJitShare} of its wall time, or {@link #warmupRounds} rounds; what it took, for the report.
     */
    private String warmUp(String side) throws Exception {
        java.lang.management.CompilationMXBean local = java.lang.management.ManagementFactory.getCompilationMXBean();
        String last = "";
        for (int round = 1; round <= warmupRounds; round++) {
            long serverBefore = serverCompileMs();
            long localBefore = local.getTotalCompilationTime();
            long start = System.nanoTime();
            drain(side, warmup);
            long wallMs = Math.max(1, (System.nanoTime() - start) / 1_000_000);
            long serverMs = serverCompileMs() - serverBefore;
            long localMs = local.getTotalCompilationTime() - localBefore;
            last = "%d round(s); compiling in the last (%d ms): server JVM %d ms, test JVM %d ms"
                    .formatted(round, wallMs, serverMs, localMs);
            progress("warm-up", side, last);
            if (Math.max(serverMs, localMs) <= warmupJitShare * wallMs) {
                return last;
            }
        }
        return last + " (not settled)";
    }

    /** The server JVM's total JIT compile time (ms), from its platform-mbean resource. */
    private long serverCompileMs() throws IOException {
        ModelNode read = operation("read-attribute", address("core-service", "platform-mbean", "type", "compilation"));
        read.get("name").set("total-compilation-time");
        ModelNode result = management.getControllerClient().execute(read);
        assertThat(result.get("outcome").asString()).as(read + " answered " + result).isEqualTo("success");
        return result.get("result").asLong();
    }

    /** With delivery on: the latency warm-up, then the measured messages, each at {@link #rate} per second. */
    private Map<String, String> atFixedRate(String side) throws Exception {
        delivery(side, "start-delivery");
        try {
            for (int count : new int[] {latencyWarmup, latencyMessages}) {
                call("reset", "side=" + side + "&expected=" + count);
                String reached = call("paced", "side=" + side + "&count=" + count + "&rate=" + rate
                        + "&senders=" + senders);
                Map<String, String> round = parse(call("await", "side=" + side + "&timeoutMs=120000"));
                assertThat(round.get("count")).as(side + " at a fixed rate " + round)
                        .isEqualTo(String.valueOf(count));
                round.put("rateReached", reached);
                if (count == latencyMessages) {
                    return round;
                }
            }
            throw new IllegalStateException("unreachable");
        } finally {
            delivery(side, "stop-delivery");
        }
    }

    private void report(List<String> sides, Map<String, Map<String, String>> throughput,
            Map<String, Map<String, String>> latency, Map<String, String> warmups) throws IOException {
        Map<String, String> m = throughput.get("millrace");
        Map<String, String> a = throughput.get("artemis");
        Map<String, String> ml = latency.get("millrace");
        Map<String, String> al = latency.get("artemis");
        double ratio = Double.parseDouble(m.get("msgsPerSec")) / Double.parseDouble(a.get("msgsPerSec"));
        double p99Ratio = Double.parseDouble(ml.get("p99Us")) / Double.parseDouble(al.get("p99Us"));
        List<String> lines = new ArrayList<>();
        lines.add("MDB benchmark, WildFly standalone-full, maxSession=15, CMT Required, persistent; order: " + sides);
        lines.add("");
        lines.add("| figure | Millrace | Artemis | ratio |");
        lines.add("|---|---:|---:|---:|");
        lines.add("| throughput, %,d msgs drained, msgs/s (first to last onMessage) | %s | %s | %.2f |".formatted(
                messages, m.get("msgsPerSec"), a.get("msgsPerSec"), ratio));
        lines.add("| latency at %,d msgs/s, %,d msgs: p50 / p99 / max, ms | %s | %s | p99 %.2f |".formatted(
                rate, latencyMessages, millis(ml), millis(al), p99Ratio));
        lines.add("| rate reached by the %d senders, msgs/s | %s | %s | - |".formatted(
                senders, ml.get("rateReached"), al.get("rateReached")));
        lines.add("");
        lines.add("Targets: throughput >= 1.5x Artemis: " + (ratio >= 1.5 ? "met" : "NOT met")
                + "; p99 <= Artemis: " + (p99Ratio <= 1.0 ? "met" : "NOT met"));
        lines.add("warm-up (rounds of %,d msgs until a round compiles under %.0f%% of its time in each JVM): %s"
                .formatted(warmup, warmupJitShare * 100, warmups));
        lines.add("raw: throughput " + throughput + "; latency " + latency);
        String text = String.join("\n", lines) + "\n";
        System.out.println(text);
        Files.writeString(Path.of(System.getProperty("bench.mdb.report", "target/mdb-bench.md")), text);
    }

    /** One line of progress on the test's output, with the wall-clock time (to match with a profile or CPU log). */
    private static void progress(String phase, String side, String event) {
        System.out.println(java.time.LocalTime.now() + " mdb-bench " + phase + " " + side + " " + event);
    }

    private static String millis(Map<String, String> round) {
        return "%.2f / %.2f / %.2f".formatted(Long.parseLong(round.get("p50Us")) / 1000.0,
                Long.parseLong(round.get("p99Us")) / 1000.0, Long.parseLong(round.get("maxUs")) / 1000.0);
    }

    private static Map<String, String> parse(String line) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String pair : line.trim().split(" ")) {
            int eq = pair.indexOf('=');
            values.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        return values;
    }

    private void delivery(String side, String operation) throws IOException {
        String bean = "millrace".equals(side) ? "MillraceBenchMdb" : "ArtemisBenchMdb";
        execute(operation(operation, address("deployment", APP, "subsystem", "ejb3", "message-driven-bean", bean)));
    }

    /** GET {@code bench/<path>?<query>} of {@link BenchServlet}; its body, once it answered 200. */
    private String call(String path, String query) throws IOException, InterruptedException {
        URI uri = URI.create(appUrl() + "bench/" + path + "?" + query);
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofMinutes(15)).GET()
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(uri + " answered " + response.body()).isEqualTo(200);
        return response.body();
    }

    private String appUrl() {
        return "http://" + management.getWebUri().getHost() + ":" + management.getWebUri().getPort() + "/mdb-bench/";
    }

    private static ModelNode address(String... pairs) {
        ModelNode address = new ModelNode().setEmptyList();
        for (int i = 0; i < pairs.length; i += 2) {
            address.add(pairs[i], pairs[i + 1]);
        }
        return address;
    }

    private static ModelNode operation(String name, ModelNode address) {
        ModelNode op = new ModelNode();
        op.get("operation").set(name);
        op.get("address").set(address);
        return op;
    }

    private boolean exists(ModelNode address) throws IOException {
        ModelNode result = management.getControllerClient().execute(operation("read-resource", address));
        return "success".equals(result.get("outcome").asString());
    }

    private void execute(ModelNode op) throws IOException {
        ModelNode result = management.getControllerClient().execute(op);
        assertThat(result.get("outcome").asString()).as(op + " answered " + result).isEqualTo("success");
    }
}
