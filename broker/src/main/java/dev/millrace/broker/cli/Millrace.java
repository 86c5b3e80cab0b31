package dev.millrace.broker.cli;

import java.io.File;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.utils.Time;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import dev.millrace.broker.config.BrokerConfig;
import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.config.ConfigurationException;
import dev.millrace.broker.server.BrokerServer;

/**
 * The {@code millrace} command line. {@code millrace server} starts one broker with embedded
 * defaults (see {@link BrokerConfig}); {@code --port}, {@code --data-dir} and {@code --config FILE}
 * override them, and {@code --set name=value} any single setting. Invalid settings are reported
 * together, by name, and the process exits with status 2. SIGTERM (and Ctrl-C) stop the broker
 * cleanly. {@code millrace cluster} starts several such servers as child processes on loopback
 * ({@link ClusterCommand}). {@code millrace xa} lists XA transaction branches and resolves in-doubt ones by hand
 * ({@link XaCommand}).
 *
 * <p>The hidden server option {@code --exit-with-parent <pid>} makes the broker stop cleanly (as on
 * SIGTERM) and the process exit with status 0 once process {@code pid} has exited; {@code millrace cluster}
 * and the test harnesses pass their own pid, so that their nodes do not outlive them when they are
 * killed with SIGKILL. If that process is not running at start, the server refuses to start (status 2).
 */
@Command(name = "millrace", mixinStandardHelpOptions = true, version = "Millrace 0.1.0-SNAPSHOT",
        description = "Millrace: a JMS platform on a Kafka-compatible log broker.",
        subcommands = {Millrace.Server.class, ClusterCommand.class, XaCommand.class})
public final class Millrace {

    public static void main(String[] args) {
        int status = new CommandLine(new Millrace()).execute(args);
        if (status != 0) {
            exit(status);
        }
    }

    /** The one place the command line ends the JVM; shutdown hooks (the broker's clean stop) run first. */
    static void exit(int status) {
        System.exit(status);
    }

    /** Runs one broker until the process is told to stop. */
    @Command(name = "server", mixinStandardHelpOptions = true,
            description = "Start a broker (single node with embedded defaults unless configured otherwise).")
    static final class Server implements Callable<Integer> {

        @Option(names = "--port", description = "Kafka-protocol listener port (setting 'port').")
        Integer port;

        @Option(names = "--data-dir", description = "Data directory (setting 'data.dir').")
        File dataDir;

        @Option(names = "--config", description = "Properties file of settings.")
        File configFile;

        @Option(names = "--set", description = "A single setting, name=value; repeatable.")
        Map<String, String> settings = new LinkedHashMap<>();

        @Option(names = "--list-settings", description = "Print every setting with its default and exit.")
        boolean listSettings;

        @Option(names = "--exit-with-parent", hidden = true, paramLabel = "PID",
                description = "Stop cleanly and exit when process PID exits (used by 'millrace cluster').")
        Long exitWithParent;

        @Override
        public Integer call() throws Exception {
            if (listSettings) {
                System.out.print(BrokerConfigLoader.describeSettings());
                return 0;
            }
            Map<String, String> overrides = new LinkedHashMap<>(settings);
            if (port != null) {
                overrides.put("port", String.valueOf(port));
            }
            if (dataDir != null) {
                overrides.put("data.dir", dataDir.getPath());
            }
            BrokerConfig config;
            try {
                config = BrokerConfigLoader.load(configFile, overrides);
            } catch (ConfigurationException e) {
                System.err.println(e.getMessage());
                return 2;
            }
            int nodeId = config.nodeId();
            if (exitWithParent != null && !ParentWatch.whenExited(exitWithParent, () -> {
                System.err.println("Millrace broker " + nodeId + ": parent process " + exitWithParent
                        + " exited; stopping");
                exit(0);
            })) {
                System.err.println("--exit-with-parent: process " + exitWithParent + " is not running");
                return 2;
            }
            BrokerServer broker = new BrokerServer(config, Time.SYSTEM);
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                broker.close();
                stopped.countDown();
            }, "millrace-shutdown"));
            try {
                broker.start();
            } catch (ConfigurationException e) {
                // settings only checked as the broker starts (TLS stores, PLAIN users)
                System.err.println(e.getMessage());
                broker.close();
                return 2;
            }
            System.out.println("Millrace broker " + nodeId + " listening on " + broker.boundAddress()
                    + ", metadata voter on " + config.controllerHost() + ":" + config.controllerPort()
                    + (config.isClusterMode() ? " (voters " + config.quorumVoters() + ")" : " (embedded)"));
            stopped.await();
            return 0;
        }
    }
}
