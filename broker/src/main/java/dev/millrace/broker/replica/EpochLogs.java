package dev.millrace.broker.replica;

import java.util.Optional;

import dev.millrace.broker.log.PartitionLog;

/** Adapts a {@link PartitionLog} to {@link EpochLog} ({@link PartitionLogEpochs}). */
public final class EpochLogs {

    private EpochLogs() {
    }

    /** The epoch view of {@code log}. */
    public static Optional<EpochLog> forLog(PartitionLog log) {
        return Optional.of(new PartitionLogEpochs(log));
    }
}
