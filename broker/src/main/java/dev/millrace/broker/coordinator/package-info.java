/**
 * What every coordinator needs to follow leadership in a cluster: the group coordinator, the share-group
 * coordinator and share-state store, the transaction coordinator and the delay service each keep their state in the
 * partitions of an internal topic, and each serves exactly the partitions of that topic this broker leads.
 *
 * <ul>
 *   <li>{@link dev.millrace.broker.coordinator.CoordinatorElection}: told when this broker becomes leader of such a
 *       partition (load its state from the local replica, then serve it) and when it stops leading it (stop serving
 *       it at once: answer {@code NOT_COORDINATOR}, drop the in-memory state).</li>
 *   <li>{@link dev.millrace.broker.coordinator.ReplicationAwaiter}: a coordinator answers a request that changed its
 *       state only once what it appended is on every in-sync replica (the partition's high watermark passed it), as
 *       a Kafka coordinator writes with {@code acks=all}; so an answer a client saw survives the loss of the
 *       leader.</li>
 *   <li>{@link dev.millrace.broker.coordinator.CoordinatorLocator}: where a partition's coordinator is (its leader),
 *       for FindCoordinator.</li>
 * </ul>
 *
 * <p>On one node every partition is led here from the start, the high watermark is the log end, and these reduce to
 * "load everything at start, answer at once".
 */
package dev.millrace.broker.coordinator;
