package dev.millrace.broker.delay;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Chooses what one delivery round carries: the pending delays due at a given time over all delay
 * partitions, earliest due first, until the round's record or byte bound is reached. A round always
 * carries at least one due record, however large, so every record is eventually delivered.
 *
 * <p>Stateless; call it on the service's thread (it reads {@link DelayPartition}s).
 */
final class DueDelays {

    private DueDelays() {
    }

    /** One due record and the delay partition it belongs to. */
    private record Due(DelayPartition partition, PendingDelay pending) {
    }

    /**
     * The delays due at {@code nowMs}, grouped by delay partition (in the order of {@code partitions}),
     * each group earliest due first; empty when nothing is due.
     */
    static Map<DelayPartition, List<PendingDelay>> select(DelayPartition[] partitions, long nowMs, int maxRecords,
                                                         long maxBytes) {
        List<Due> candidates = new ArrayList<>();
        for (DelayPartition p : partitions) {
            for (PendingDelay pending : p.due(nowMs, maxRecords)) {
                candidates.add(new Due(p, pending));
            }
        }
        if (candidates.size() > 1) {
            candidates.sort((a, b) -> PendingDelay.BY_DUE.compare(a.pending(), b.pending()));
        }
        Map<DelayPartition, List<PendingDelay>> round = new LinkedHashMap<>();
        for (DelayPartition p : partitions) {
            round.put(p, new ArrayList<>());
        }
        int records = 0;
        long bytes = 0;
        for (Due due : candidates) {
            if (records > 0 && (records >= maxRecords || bytes + due.pending().sizeInBytes > maxBytes)) {
                break;
            }
            round.get(due.partition()).add(due.pending());
            records++;
            bytes += due.pending().sizeInBytes;
        }
        round.values().removeIf(List::isEmpty);
        return round;
    }
}
