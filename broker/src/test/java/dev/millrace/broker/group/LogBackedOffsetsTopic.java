package dev.millrace.broker.group;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.utils.Time;

import dev.millrace.broker.log.LogConfig;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.log.Scheduler;

/** An {@link OffsetsTopic} over real compacted {@link PartitionLog}s in a directory, reopened on restart. */
final class LogBackedOffsetsTopic implements OffsetsTopic, AutoCloseable {

    private final PartitionLog[] logs;
    /** The leader epoch of each partition, as a broker's metadata would say; set by the tests. */
    private final int[] leaderEpochs;

    private LogBackedOffsetsTopic(PartitionLog[] logs) {
        this.logs = logs;
        this.leaderEpochs = new int[logs.length];
    }

    static LogBackedOffsetsTopic open(Path dir, int partitionCount) throws IOException {
        LogConfig config = new LogConfig(Map.of(LogConfig.CLEANUP_POLICY, LogConfig.CLEANUP_POLICY_COMPACT));
        PartitionLog[] logs = new PartitionLog[partitionCount];
        for (int p = 0; p < partitionCount; p++) {
            logs[p] = PartitionLog.open(dir.resolve(NAME + "-" + p).toFile(), config, Time.SYSTEM, Scheduler.IMMEDIATE);
        }
        return new LogBackedOffsetsTopic(logs);
    }

    @Override
    public int partitionCount() {
        return logs.length;
    }

    @Override
    public PartitionLog log(int partition) {
        return logs[partition];
    }

    @Override
    public synchronized int leaderEpoch(int partition) {
        return leaderEpochs[partition];
    }

    /** The partition's leader epoch moves to {@code epoch} (a new leader was elected). */
    synchronized void leaderEpoch(int partition, int epoch) {
        leaderEpochs[partition] = epoch;
    }

    /** Every record of the partition, decoded, in offset order. */
    List<GroupRecord> records(int partition) {
        List<GroupRecord> out = new ArrayList<>();
        GroupLoader.replay(logs[partition], partition, out::add);
        return out;
    }

    @Override
    public void close() {
        for (PartitionLog log : logs) {
            log.close();
        }
    }
}
