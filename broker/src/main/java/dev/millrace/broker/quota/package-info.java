/**
 * Client quotas: which quota applies to a (user, client id) with Kafka's precedence ({@link
 * dev.millrace.broker.quota.ClientQuotaConfigs}), each client's usage over a sliding window of samples and the
 * throttle time that brings it back to its quota ({@link dev.millrace.broker.quota.SampledRate}), kept per measured
 * client by {@link dev.millrace.broker.quota.ClientQuotaManager}. The quotas themselves are metadata records
 * ({@code dev.millrace.broker.controller.MetadataRecord.ClientQuotaRecord}) applied from each broker's image;
 * {@code dev.millrace.broker.server.ThrottlingApis} measures requests and sets {@code throttle_time_ms}, and the
 * connection ({@code dev.millrace.broker.network.KafkaConnectionHandler}) mutes itself for that time after the
 * response.
 */
package dev.millrace.broker.quota;
