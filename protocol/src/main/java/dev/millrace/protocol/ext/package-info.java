/**
 * Millrace's extensions to the Kafka protocol: request and response codecs for the APIs that JMS needs and
 * Kafka does not offer (queue browsing; more follow). They travel on the broker's ordinary Kafka listener, in
 * ordinary Kafka frames, under API keys of a reserved range, and are listed in the broker's ApiVersions response
 * like any other API, so a client learns from ApiVersions whether a broker serves them. Kafka clients never send
 * these keys and ignore unknown keys in ApiVersions.
 *
 * <h2>Frames</h2>
 * <pre>
 * request:   int32 size | int16 api_key | int16 api_version | int32 correlation_id | string client_id | body
 * response:  int32 size | int32 correlation_id | body
 * </pre>
 * The request header is Kafka's request header version 1 (client_id: int16 length, -1 for null, then UTF-8);
 * the response header is Kafka's response header version 0. Bodies are laid out with kafka-clients'
 * {@code org.apache.kafka.common.protocol.types} schemas (big-endian fixed-width integers, int16-length strings,
 * int32-length byte arrays, int32-count arrays); each API's class draws its body. API keys
 * {@value ExtensionApi#FIRST_KEY}..{@value ExtensionApi#LAST_KEY} are reserved for Millrace; see
 * {@link dev.millrace.protocol.ext.ExtensionApi} for the keys in use.
 *
 * <p>Every response body starts with {@code int16 error_code, string error_message (nullable)}, the error code
 * being a Kafka error code ({@code org.apache.kafka.common.protocol.Errors}).
 */
package dev.millrace.protocol.ext;
