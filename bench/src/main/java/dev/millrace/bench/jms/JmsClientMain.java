package dev.millrace.bench.jms;

import java.util.Locale;

import jakarta.jms.ConnectionFactory;

/**
 * A JMS client in a JVM of its own, started by {@link ChildClient} for the measurements that need a client nobody
 * has used before: a fresh latency run ({@link PacedLatency}) or a footprint ({@link ClientFootprint}). Prints
 * progress, then one line {@code RESULT key=value ...} that {@link ChildClient} reads, and exits 0; on failure it
 * prints the exception and exits 1 (2 on bad arguments).
 *
 * <pre>
 *   java -cp bench/target/millrace-bench.jar dev.millrace.bench.jms.JmsClientMain
 *       latency Millrace|Artemis HOST:PORT queue|topic NAME RATE UNMEASURED MEASURED
 *   java -cp bench/target/millrace-bench.jar dev.millrace.bench.jms.JmsClientMain
 *       footprint Millrace|Artemis HOST:PORT CONNECTIONS QUEUE
 * </pre>
 *
 * <p>Runs on its main thread; the JMS clients' own threads do the rest.
 */
public final class JmsClientMain {

    static final String RESULT = "RESULT";
    private static final int MESSAGE_BYTES = 1024;
    private static final long TIMEOUT_MS = 120_000;

    private JmsClientMain() {
    }

    public static void main(String[] args) {
        String line;
        try {
            line = run(args);
        } catch (IllegalArgumentException | ArrayIndexOutOfBoundsException e) {
            System.out.println("bad arguments: " + e.getMessage() + "; usage: JmsClientMain latency BROKER HOST:PORT "
                    + "queue|topic NAME RATE UNMEASURED MEASURED | footprint BROKER HOST:PORT CONNECTIONS QUEUE");
            System.exit(2);
            return;
        } catch (Exception e) {
            e.printStackTrace(System.out);
            System.exit(1);
            return;
        }
        System.out.println(line);
        System.out.flush();
        System.exit(0);
    }

    private static String run(String[] args) throws Exception {
        String mode = args[0];
        String broker = args[1];
        String bootstrap = args[2];
        ConnectionFactory factory = JmsBrokers.factory(broker, bootstrap);
        if (mode.equals("latency")) {
            DestinationKind kind = DestinationKind.of(args[3]);
            int rate = Integer.parseInt(args[5]);
            long unmeasured = Long.parseLong(args[6]);
            long measured = Long.parseLong(args[7]);
            System.out.println(broker + " fresh client: " + kind.label() + " " + args[4] + " at " + rate
                    + " msgs/s, " + unmeasured + " unmeasured, then " + measured + " measured");
            PacedLatency.Figures f = new PacedLatency(factory, MESSAGE_BYTES, TIMEOUT_MS)
                    .run(kind, args[4], rate, unmeasured, measured);
            return String.format(Locale.ROOT, "%s p50Us=%.1f p99Us=%.1f maxUs=%.1f count=%d achievedRate=%.1f",
                    RESULT, f.p50Us(), f.p99Us(), f.maxUs(), f.count(), f.achievedRate());
        }
        if (mode.equals("footprint")) {
            int connections = Integer.parseInt(args[3]);
            System.out.println(broker + " footprint: " + connections + " connections on queue " + args[4]);
            ClientFootprint.Figures f = ClientFootprint.measure(factory, connections, args[4]);
            return String.format(Locale.ROOT, "%s connections=%d threadsBefore=%d threadsAfter=%d "
                            + "heapBeforeBytes=%d heapAfterBytes=%d setupMs=%.1f", RESULT, f.connections(),
                    f.threadsBefore(), f.threadsAfter(), f.heapBeforeBytes(), f.heapAfterBytes(), f.setupMs());
        }
        throw new IllegalArgumentException("unknown mode '" + mode + "': expected latency or footprint");
    }
}
