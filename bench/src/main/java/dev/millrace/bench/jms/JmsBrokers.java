package dev.millrace.bench.jms;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;

import dev.millrace.bench.e2e.BrokerComparison;
import dev.millrace.bench.e2e.BrokerNode;
import dev.millrace.bench.e2e.Cleanup;
import dev.millrace.jms.MillraceConnectionFactory;
import jakarta.jms.ConnectionFactory;

/**
 * The two brokers of the JMS comparisons, each in a JVM of its own on 127.0.0.1 with the same options
 * ({@link BrokerComparison#BROKER_JVM}) and data under the run's work directory: Millrace from {@code broker/target}
 * (with {@code group.share.auto.offset.reset=earliest}, as queues need, plus any {@code --millrace-set}), Artemis
 * embedded by {@link ArtemisServer}. Factories: {@code new MillraceConnectionFactory(bootstrap)} with its defaults,
 * and {@code ActiveMQConnectionFactory("tcp://127.0.0.1:PORT?confirmationWindowSize=1048576")} (Artemis confirms
 * async sends only with a confirmation window), otherwise its defaults.
 *
 * <p>Not thread-safe: started and stopped by the comparison's main thread.
 */
final class JmsBrokers {

    /** The command-line options the JMS comparisons share. */
    record Options(boolean artemisFirst, boolean keep, String only, List<String> millraceSettings, Path home) {

        /** Broker order: Millrace first unless {@code --artemis-first}, and only one with {@code --only}. */
        List<String> order() {
            List<String> order = new ArrayList<>(artemisFirst ? List.of("artemis", "millrace")
                    : List.of("millrace", "artemis"));
            if (only != null) {
                order.retainAll(List.of(only));
            }
            return order;
        }
    }

    private final List<BrokerNode> nodes = new ArrayList<>();
    private final Map<String, ConnectionFactory> factories = new LinkedHashMap<>();

    private JmsBrokers() {
    }

    /** Starts the brokers of {@code options.order()}; the cleanup stops them if the JVM exits early. */
    static JmsBrokers start(Options options, Path workDir, Cleanup cleanup) throws Exception {
        JmsBrokers brokers = new JmsBrokers();
        for (String name : options.order()) {
            BrokerNode node = startNode(name, options, workDir, cleanup);
            brokers.nodes.add(node);
            brokers.factories.put(node.name(), factory(node.name(), node.bootstrap()));
        }
        return brokers;
    }

    /**
     * Starts one broker, {@code millrace} or {@code artemis}, in a JVM of its own with its data and log under
     * {@code dir}; the caller stops it ({@link BrokerNode#stop}), or the cleanup does if the JVM exits early.
     */
    static BrokerNode startNode(String name, Options options, Path dir, Cleanup cleanup) throws Exception {
        if (name.equals("millrace")) {
            BrokerNode node = BrokerNode.startMillrace(options.home(), dir, BrokerComparison.BROKER_JVM, cleanup,
                    options.millraceSettings());
            System.out.println("Millrace broker settings: " + options.millraceSettings());
            return node;
        }
        if (name.equals("artemis")) {
            return BrokerNode.startArtemis(ArtemisServer.class.getName(), dir, BrokerComparison.BROKER_JVM, cleanup);
        }
        throw new IllegalArgumentException("unknown broker '" + name + "': expected millrace or artemis");
    }

    /**
     * The connection factory for a broker named {@code Millrace} or {@code Artemis} ({@link BrokerNode#name}) at
     * {@code bootstrap} (host:port), as the class javadoc describes. System property
     * {@code millrace.factory.options} ({@code name=value&name=value}, the options of {@code MillraceConnectionFactory})
     * changes the Millrace factory's defaults, e.g. {@code blockOnAcknowledge=false}.
     */
    static ConnectionFactory factory(String name, String bootstrap) {
        return switch (name) {
            case "Millrace" -> millrace(bootstrap, System.getProperty("millrace.factory.options", ""));
            case "Artemis" -> new ActiveMQConnectionFactory("tcp://" + bootstrap + "?confirmationWindowSize=1048576");
            default -> throw new IllegalArgumentException("unknown broker '" + name
                    + "': expected Millrace or Artemis");
        };
    }

    static MillraceConnectionFactory millrace(String bootstrap, String options) {
        MillraceConnectionFactory f = new MillraceConnectionFactory(bootstrap);
        java.util.Map<String, String> set = new java.util.LinkedHashMap<>();
        for (String option : options.split("&")) {
            if (option.isBlank()) {
                continue;
            }
            int eq = option.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("millrace.factory.options: '" + option + "' is not name=value");
            }
            set.put(option.substring(0, eq).trim(), option.substring(eq + 1).trim());
        }
        f.setProperties(set);
        return f;
    }

    /** "Millrace" and/or "Artemis", in run order, with their connection factories. */
    Map<String, ConnectionFactory> factories() {
        return factories;
    }

    /** Prints the last lines of every broker's log (after a failed run). */
    void printLogTails(int lines) {
        for (BrokerNode node : nodes) {
            node.printLogTail(lines);
        }
    }

    /** Stops every broker, printing the line where ArtemisServer names its journal type first. */
    void stop() {
        for (BrokerNode node : nodes) {
            if (node.name().equals("Artemis")) {
                printStartLine(node.log());
            }
            node.stop();
        }
    }

    /** Prints the line where ArtemisServer names its journal type, reading only the start of its log. */
    private static void printStartLine(Path log) {
        try (Stream<String> lines = Files.lines(log, StandardCharsets.ISO_8859_1)) {
            lines.limit(500).filter(line -> line.startsWith("Artemis started")).forEach(System.out::println);
        } catch (IOException | UncheckedIOException e) {
            System.out.println("could not read " + log + ": " + e);
        }
    }
}
