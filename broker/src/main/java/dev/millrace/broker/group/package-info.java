/**
 * The classic consumer-group coordinator: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
 * OffsetFetch, DescribeGroups, ListGroups and DeleteGroups, as the Kafka
 * {@code KafkaConsumer} uses them with {@code group.protocol=classic}. {@link
 * dev.millrace.broker.group.GroupCoordinator} is the entry point; state is persisted in {@code
 * __consumer_offsets} through {@link dev.millrace.broker.group.OffsetsTopic}.
 */
package dev.millrace.broker.group;
