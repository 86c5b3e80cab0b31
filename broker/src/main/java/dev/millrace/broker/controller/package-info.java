/**
 * The cluster metadata controller: topics, partitions (replicas, leader, leader epoch, partition
 * epoch, ISR) and topic configs as a replicated state machine on SOFAJRaft.
 *
 * <p>How a change flows:
 * <pre>
 *   caller ──► RaftController (one event thread, one proposal in flight)
 *                 │ TopicControlManager / ConfigControlManager: validate against the image,
 *                 │ compute records + per-entity ApiErrors, change nothing
 *                 ▼
 *              MetadataQuorum.propose (one raft entry = one MetadataRecordSerde batch, bound to the term)
 *                 ▼
 *              MetadataStateMachine.onApply on every voter: decode, MetadataImageBuilder.replay,
 *              publish the new immutable MetadataImage, call listeners, run the leader's closure
 *                 ▼
 *              caller's future completes with the computed response
 * </pre>
 *
 * <p>Snapshots ({@link dev.millrace.broker.controller.MetadataSnapshotFile}) hold the image as the
 * records that rebuild it, so loading one is the same replay as applying the log.
 */
package dev.millrace.broker.controller;
