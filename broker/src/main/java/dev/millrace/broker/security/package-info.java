/**
 * Security of the Kafka-protocol listeners (issue 26, first part): TLS, SASL authentication and the principal each
 * request carries, with the Kafka protocol's own mechanisms so that kafka-clients and Kafka tools connect unchanged.
 *
 * <h2>Listeners</h2>
 * {@code listeners} names the listeners and {@code listener.security.protocol.map} gives each its protocol
 * ({@link dev.millrace.broker.config.ListenerSettings}). Each listener is one
 * {@link dev.millrace.broker.network.KafkaServer} whose connections get the handlers of their
 * {@link BrokerListenerSecurity}, in front of the frame decoder and the connection handler:
 *
 * <pre>
 *  socket -&gt; [ssl] -&gt; [tls-handshake] -&gt; [regions] -&gt; frames -&gt; [sasl] -&gt; kafka -&gt; RequestHandler
 *             |            |                 |                    |
 *             |            |                 |                    +- SaslAuthenticator: SaslHandshake/SaslAuthenticate
 *             |            |                 |                       first; then principal User:&lt;name&gt;
 *             |            |                 +- FileRegionEncoder: zero-copy responses copied for encryption
 *             |            +- TlsHandshakeHandler: failed handshakes logged; on SSL listeners the client
 *             |               certificate's subject is the principal
 *             +- SslHandler over OpenSSL (netty-tcnative's BoringSSL) or the JDK's SSLEngine, by ssl.engine
 *                (SslEngines; stores loaded by kafka-clients' DefaultSslEngineFactory)
 * </pre>
 *
 * The principal is a channel attribute ({@link dev.millrace.broker.network.ListenerSecurity#PRINCIPAL}) that the
 * connection handler puts in every request's {@code RequestContext}, with the listener's name and protocol, for the
 * authorizer still to come.
 *
 * <h2>SASL</h2>
 * The mechanisms are kafka-clients' server implementations ({@code PlainSaslServer}, {@code ScramSaslServer}); this
 * package gives them users ({@link SaslServers}): PLAIN users from the listener's JAAS configuration
 * ({@link PlainUsers}), SCRAM credentials from the metadata image ({@link ScramCredentials}), which the controller
 * writes when the Admin API alters them ({@code dev.millrace.broker.controller.ScramControlManager}). The states of
 * one connection's exchange are drawn in {@link SaslAuthenticator}. A credential created through one broker is used
 * by another once that one has applied the metadata record (normally within milliseconds).
 *
 * <h2>Between nodes</h2>
 * A node is a client of the other nodes' inter-broker listener with that listener's protocol
 * ({@link InterBrokerSecurity}): replica fetching, controller requests, transaction markers and verification,
 * share-state and share-member calls and the delay service's producer all connect with it, and the principal they
 * authenticate as must be a super user when the authorizer is on. The metadata quorum's own port (SOFAJRaft RPC)
 * is secured apart, with mutual TLS ({@code controller.quorum.security.protocol=SSL},
 * {@code dev.millrace.broker.controller.QuorumTls}).
 *
 * <h2>Elsewhere</h2>
 * Client quotas are measured in {@code dev.millrace.broker.quota} and enforced by
 * {@code dev.millrace.broker.server.ThrottlingApis}.
 *
 * <h2>Not here yet</h2>
 * SASL re-authentication (KIP-368) and the unframed SASL of
 * SaslHandshake version 0; host-name checks on the metadata quorum's TLS (SOFABolt gives its engines no peer host).
 */
package dev.millrace.broker.security;
