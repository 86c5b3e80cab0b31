package dev.millrace.broker.coordinator;

/**
 * Hears which partitions of one internal topic this broker leads. Events for one partition arrive in the order the
 * metadata made them ({@code onElected(p, 4)}, {@code onResigned(p, 4)}, {@code onElected(p, 6)}, ...), never two
 * elections without a resignation between them.
 *
 * <p>Threading: called on the metadata applying thread, which must not wait: an implementation hands the work (load
 * or unload) to its own executor and returns.
 */
public interface CoordinatorElection {

    /**
     * This broker now leads {@code partition} in {@code leaderEpoch}: load its state from the local log (all of it,
     * up to the log end; the records above the high watermark become committed as the followers fetch them) and serve
     * it. Appends stamp {@code leaderEpoch}; the partition refuses them once a newer epoch exists.
     */
    void onElected(int partition, int leaderEpoch);

    /**
     * This broker no longer leads {@code partition} (it follows another leader, or no longer holds a replica):
     * stop serving it at once and forget its state. {@code leaderEpoch} is the epoch that ended.
     */
    void onResigned(int partition, int leaderEpoch);
}
