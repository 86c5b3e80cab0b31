/**
 * The cluster metadata controller: the cluster id, registered brokers and their state, topics,
 * partitions (replicas, leader, leader epoch, partition epoch, ISR), topic configs and producer-id
 * blocks, as a replicated state machine on SOFAJRaft.
 *
 * <p>How a change flows:
 * <pre>
 *   caller ──► RaftController (one event thread, one proposal in flight)
 *                 │ TopicControlManager / ConfigControlManager / ClusterControlManager /
 *                 │ ReplicationControlManager: validate against the image (and, for membership,
 *                 │ the in-memory BrokerSessions), compute records + per-entity response,
 *                 │ change nothing (a ClusterDelta lets later steps of one event see earlier ones)
 *                 ▼
 *              MetadataQuorum.propose (one raft entry = one MetadataRecordSerde batch, bound to the term)
 *                 ▼
 *              MetadataStateMachine.onApply on every voter: decode, MetadataImageBuilder.replay,
 *              publish the new immutable MetadataImage, call listeners, run the leader's closure
 *                 ▼
 *              the event's in-memory bookkeeping (e.g. the index a registration was applied at),
 *              then the caller's future completes with the computed response
 * </pre>
 *
 * <p>Membership:
 * <pre>
 *   leadership start ─► ClusterIdRecord (once, from initialClusterId); every broker's session restarts
 *   registerBroker   ─► BrokerRegistrationRecord (new epoch, FENCED); a replaced incarnation's
 *                       leaderships and ISR memberships move away as when fenced
 *   brokerHeartbeat  ─► session kept alive; caught up with its registration ─► BrokerStateRecord UNFENCED
 *                       + leader of leaderless partitions whose ISR holds it; wantShutdown ─►
 *                       CONTROLLED_SHUTDOWN + leaderships handed to other ISR members
 *   periodic check   ─► session expired ─► BrokerStateRecord FENCED + PartitionRecords: new leader from
 *                       the ISR (replica order), it leaves ISRs unless last member (then leader -1)
 * </pre>
 * Broker liveness is not replicated: it lives on the active controller only, and a newly active one
 * gives every registered broker a full session before it can be fenced.
 *
 * <p>Elections and ISR: every leader change is a new {@link dev.millrace.broker.controller.MetadataRecord.PartitionRecord}
 * with leader epoch and partition epoch + 1; an ISR change asked for by the leader ({@code alterPartition},
 * Kafka's AlterPartition checks) raises the partition epoch only. Preferred election (on request and
 * every {@code leaderImbalanceCheckInterval}) moves leadership back to the first replica once it is
 * unfenced and in the ISR. Replicas are placed on unfenced brokers only, rack-alternating
 * ({@link dev.millrace.broker.controller.ReplicaPlacer}).
 *
 * <p>Snapshots ({@link dev.millrace.broker.controller.MetadataSnapshotFile}) hold the image as the
 * records that rebuild it, so loading one is the same replay as applying the log.
 */
package dev.millrace.broker.controller;
