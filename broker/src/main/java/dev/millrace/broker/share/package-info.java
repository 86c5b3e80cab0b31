/**
 * Share groups (KIP-932 semantics): the queue side of Millrace. Members of a share group consume
 * the same partitions together; each record is handed to one member at a time under a
 * time-limited acquisition lock and is then accepted, released (redelivered later, delivery count
 * + 1) or rejected. The pieces, one job each:
 *
 * <ul>
 *   <li>{@link dev.millrace.broker.share.ShareGroupCoordinator}: ShareGroupHeartbeat, membership,
 *       member epochs, assignment, session timeouts; ShareGroupDescribe and the share part of
 *       ListGroups.</li>
 *   <li>{@link dev.millrace.broker.share.SharePartition}: the per (group, topic-partition) record
 *       state machine (acquire, acknowledge, lock expiry, delivery limit, redelivery backoff).</li>
 *   <li>{@link dev.millrace.broker.share.ShareFetchHandler} and
 *       {@link dev.millrace.broker.share.ShareAcknowledgeHandler}: the wire APIs, over
 *       {@link dev.millrace.broker.share.ShareSessionCache} (KIP-932 share sessions) and
 *       {@link dev.millrace.broker.share.ShareFetchPurgatory} (long-poll).</li>
 *   <li>{@link dev.millrace.broker.share.DeadLetterPublisher}: copies archived records to the
 *       topic's dead-letter topic ({@code millrace.share.dlq.topic}), exactly once across crashes: the copies a
 *       share-partition owes are saved with its state ({@link dev.millrace.broker.share.DeadLetterCopies}).</li>
 *   <li>{@link dev.millrace.broker.share.ShareStateCoordinator}: the share-partition state of the groups whose
 *       {@code __share_group_state} partition this broker leads, loaded when elected, dropped when resigned;
 *       {@link dev.millrace.broker.share.ShareStateHandler} serves it to other brokers (the ShareState extension) and
 *       {@link dev.millrace.broker.share.ClusterShareStateStore} is what share-partitions save to, here or remote.</li>
 * </ul>
 *
 * <p>In a cluster (issue 23) a share-partition lives on the leader of its topic-partition and is dropped when that
 * broker stops leading it ({@link dev.millrace.broker.share.SharePartitionManager}); its state lives at the
 * share-state coordinator of its group. Failover promises: an acknowledgement answered without error is saved on
 * every in-sync replica of the state partition, so an accepted record is never delivered again; an acquisition is
 * saved before its records are handed out, so records acquired under a lock held on a lost broker come back with
 * that delivery counted; the old leader of a moved share-partition saves nothing more (it is closed at once, and
 * fenced by its leader epoch at the coordinator), so nothing is released or dead-lettered twice by two leaders; a
 * dead-letter copy owed in the saved state is made by the next leader, and one the old leader made already is
 * answered as a duplicate by the dead-letter partition.
 *
 * <p>{@link dev.millrace.broker.share.ShareBroker} builds and wires them for the server.
 */
package dev.millrace.broker.share;
