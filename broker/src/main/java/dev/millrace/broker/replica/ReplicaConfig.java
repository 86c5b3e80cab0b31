package dev.millrace.broker.replica;

/**
 * The replication settings of a broker, in Kafka's names.
 *
 * @param replicaLagTimeMaxMs       {@code replica.lag.time.max.ms}: a follower that has not caught up with the
 *                                  leader's log end for this long leaves the ISR
 * @param replicaFetchWaitMaxMs     {@code replica.fetch.wait.max.ms}: how long the leader may park a follower's fetch
 * @param replicaFetchMaxBytes      {@code replica.fetch.max.bytes}, per partition
 * @param replicaFetchResponseMaxBytes {@code replica.fetch.response.max.bytes}, per request
 * @param replicaFetchBackoffMs     {@code replica.fetch.backoff.ms}: the pause after an error before fetching again
 * @param requestTimeoutMs          how long a follower waits for the leader to answer one request
 */
public record ReplicaConfig(long replicaLagTimeMaxMs, int replicaFetchWaitMaxMs, int replicaFetchMaxBytes,
                            int replicaFetchResponseMaxBytes, int replicaFetchBackoffMs, int requestTimeoutMs) {

    public ReplicaConfig {
        checkPositive(replicaLagTimeMaxMs, "replica.lag.time.max.ms");
        checkPositive(replicaFetchWaitMaxMs, "replica.fetch.wait.max.ms");
        checkPositive(replicaFetchMaxBytes, "replica.fetch.max.bytes");
        checkPositive(replicaFetchResponseMaxBytes, "replica.fetch.response.max.bytes");
        checkPositive(replicaFetchBackoffMs, "replica.fetch.backoff.ms");
        if (requestTimeoutMs <= replicaFetchWaitMaxMs) {
            throw new IllegalArgumentException("The replica request timeout (" + requestTimeoutMs
                    + " ms) must be above replica.fetch.wait.max.ms (" + replicaFetchWaitMaxMs + " ms)");
        }
    }

    /** Kafka's defaults: 30 s lag, 500 ms fetch wait, 1 MiB per partition, 10 MiB per response, 1 s backoff. */
    public static ReplicaConfig defaults() {
        return new ReplicaConfig(30_000, 500, 1024 * 1024, 10 * 1024 * 1024, 1000, 30_000);
    }

    public ReplicaConfig withReplicaLagTimeMaxMs(long ms) {
        return new ReplicaConfig(ms, replicaFetchWaitMaxMs, replicaFetchMaxBytes, replicaFetchResponseMaxBytes,
                replicaFetchBackoffMs, requestTimeoutMs);
    }

    public ReplicaConfig withReplicaFetchWaitMaxMs(int ms) {
        return new ReplicaConfig(replicaLagTimeMaxMs, ms, replicaFetchMaxBytes, replicaFetchResponseMaxBytes,
                replicaFetchBackoffMs, requestTimeoutMs);
    }

    public ReplicaConfig withReplicaFetchBackoffMs(int ms) {
        return new ReplicaConfig(replicaLagTimeMaxMs, replicaFetchWaitMaxMs, replicaFetchMaxBytes,
                replicaFetchResponseMaxBytes, ms, requestTimeoutMs);
    }

    /** How often the leader looks for lagging followers: half the lag time, as Kafka does. */
    public long isrCheckIntervalMs() {
        return Math.max(1, replicaLagTimeMaxMs / 2);
    }

    private static void checkPositive(long value, String name) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, was " + value);
        }
    }
}
