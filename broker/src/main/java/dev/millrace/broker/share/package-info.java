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
 *       topic's dead-letter topic ({@code millrace.share.dlq.topic}).</li>
 * </ul>
 *
 * <p>{@link dev.millrace.broker.share.ShareBroker} builds and wires them for the server.
 */
package dev.millrace.broker.share;
