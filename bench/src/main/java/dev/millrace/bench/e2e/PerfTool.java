package dev.millrace.bench.e2e;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs one of Kafka's perf tools ({@code org.apache.kafka.tools.ProducerPerformance} or
 * {@code ConsumerPerformance} from kafka-tools) in a JVM of its own on the peer classpath, bounded
 * by a timeout, with stdout and stderr in files of the work directory, and parses its summary.
 */
final class PerfTool {

    /** JVM options of every tool run: the heap Kafka's perf-test scripts give them, pre-touched. */
    static final List<String> TOOL_JVM = List.of("-Xms512m", "-Xmx512m", "-XX:+AlwaysPreTouch",
            "-Duser.language=en", "-Duser.country=US", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");

    static final String PRODUCER = "org.apache.kafka.tools.ProducerPerformance";
    static final String CONSUMER = "org.apache.kafka.tools.ConsumerPerformance";
    static final String SHARE_CONSUMER = "org.apache.kafka.tools.ShareConsumerPerformance";

    /** Seconds ConsumerPerformance waits for a record before giving up (its --timeout). */
    static final int CONSUMER_IDLE_TIMEOUT_MS = 30_000;

    private PerfTool() {
    }

    /**
     * ProducerPerformance's arguments; {@code warmup} records (0 for none) are left out of its steady
     * state; {@code idempotence} sets the producer's enable.idempotence.
     */
    /** How long each transaction of the transactional run stays open before the tool commits it. */
    static final int TRANSACTION_DURATION_MS = 100;

    static List<String> producerArgs(String bootstrap, String topic, long records, long warmup, int recordSize,
                                     long throughput, String acks, boolean idempotence) {
        return producerArgs(bootstrap, topic, records, warmup, recordSize, throughput, acks, idempotence, null);
    }

    /** With a {@code transactionalId}, the tool commits a transaction every {@link #TRANSACTION_DURATION_MS}. */
    static List<String> producerArgs(String bootstrap, String topic, long records, long warmup, int recordSize,
                                     long throughput, String acks, boolean idempotence, String transactionalId) {
        List<String> args = new ArrayList<>(List.of(PRODUCER, "--bootstrap-server", bootstrap, "--topic", topic,
                "--num-records", Long.toString(records)));
        if (warmup > 0) {
            args.addAll(List.of("--warmup-records", Long.toString(warmup)));
        }
        args.addAll(List.of("--record-size", Integer.toString(recordSize), "--throughput", Long.toString(throughput),
                "--command-property", "acks=" + acks, "enable.idempotence=" + idempotence));
        if (transactionalId != null) {
            args.addAll(List.of("--transactional-id", transactionalId, "--transaction-duration-ms",
                    Integer.toString(TRANSACTION_DURATION_MS)));
        }
        return args;
    }

    static List<String> consumerArgs(String bootstrap, String topic, long records, String group) {
        return List.of(CONSUMER, "--bootstrap-server", bootstrap, "--topic", topic,
                "--num-records", Long.toString(records), "--group", group,
                "--timeout", Integer.toString(CONSUMER_IDLE_TIMEOUT_MS));
    }

    /**
     * ShareConsumerPerformance's arguments: {@code consumers} share consumers in one group (the tool's
     * {@code --threads}, given only above 1) with the tool's defaults (implicit acknowledgement,
     * max.poll.records 500). The group must start at the earliest offset, which the tool does not set:
     * {@link BrokerNode#setShareGroupEarliest} does it first, on either broker.
     */
    static List<String> shareConsumerArgs(String bootstrap, String topic, long records, String group, int consumers) {
        List<String> args = new ArrayList<>(List.of(SHARE_CONSUMER, "--bootstrap-server", bootstrap, "--topic", topic,
                "--num-records", Long.toString(records), "--group", group,
                "--timeout", Integer.toString(CONSUMER_IDLE_TIMEOUT_MS)));
        if (consumers > 1) {
            args.addAll(List.of("--threads", Integer.toString(consumers)));
        }
        return args;
    }

    /** The command as a person would type it from the project root, with the broker's address as given. */
    static String printable(List<String> toolArgs, String bootstrapShownAs) {
        List<String> parts = new ArrayList<>();
        parts.add("java");
        parts.addAll(TOOL_JVM.subList(0, 3));
        parts.add("-cp \"$(cat bench/target/kafka-peer.classpath)\"");
        boolean nextIsBootstrap = false;
        for (String arg : toolArgs) {
            parts.add(nextIsBootstrap ? bootstrapShownAs : arg);
            nextIsBootstrap = arg.equals("--bootstrap-server");
        }
        return String.join(" ", parts);
    }

    /**
     * Runs the tool and returns its figures, or a FAILED result with the reason and the problems
     * the client logged. {@code expected} is the record count the run must reach.
     */
    static PerfResult run(String label, String peerClasspath, List<String> toolArgs, long expected,
                          Duration timeout, Path workDir, Cleanup cleanup) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(BrokerComparison.javaBinary());
        command.addAll(TOOL_JVM);
        command.add("-cp");
        command.add(peerClasspath);
        command.addAll(toolArgs);
        Path out = workDir.resolve(label + ".out");
        Path err = workDir.resolve(label + ".err");
        Process process = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        cleanup.track(process);
        boolean finished;
        try {
            finished = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!finished) {
                Cleanup.stop(process, Duration.ofSeconds(10));
            }
        } finally {
            cleanup.untrack(process);
        }
        List<String> stdout = Cleanup.readLines(out);
        List<String> problems = Cleanup.problems(Cleanup.readLines(err), 6);
        for (String line : stdout) {
            if (line.startsWith("WARNING") || line.startsWith("ERROR")) {
                problems.add(0, line.strip());
            }
        }
        boolean producer = toolArgs.get(0).equals(PRODUCER);
        PerfResult parsed = producer ? PerfResult.parseProducer(stdout, expected)
                : PerfResult.parseConsumer(stdout, expected);
        String reason;
        if (!finished) {
            reason = "timed out after " + timeout.toSeconds() + " s";
        } else if (parsed == null) {
            reason = "exit code " + process.exitValue() + ", no summary line";
        } else if (!parsed.ok()) {
            reason = parsed.reason();
        } else if (process.exitValue() != 0) {
            reason = "exit code " + process.exitValue();
        } else {
            return parsed;
        }
        if (!problems.isEmpty()) {
            reason += "; the client said: " + String.join(" | ", problems);
        }
        return new PerfResult(PerfResult.Status.FAILED, reason, parsed == null ? Map.of() : parsed.figures());
    }
}
