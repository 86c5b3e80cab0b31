package dev.millrace.broker.server;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.apache.kafka.common.utils.Time;

import dev.millrace.broker.cluster.ControllerClient;
import dev.millrace.broker.network.RequestHandler;
import dev.millrace.broker.quota.ClientQuotaConfigs.Match;
import dev.millrace.broker.quota.ClientQuotaManager;
import dev.millrace.broker.quota.QuotaType;
import dev.millrace.protocol.ext.ExtensionHeader;

/**
 * Enforces client quotas around the APIs it wraps, per (user, client id): the user is the connection's principal
 * name ({@code ANONYMOUS} without authentication), the client id the request header's.
 * <ul>
 *   <li>{@code producer_byte_rate}: a Produce request's record bytes, recorded once it is answered;</li>
 *   <li>{@code consumer_byte_rate}: a consumer Fetch's or a ShareFetch's response record bytes; a Fetch of a client
 *       with this quota asks for at most one quota sample's worth of bytes (its {@code max_bytes} is lowered, the
 *       first batch is still returned whole), so one response cannot overshoot by more than that;</li>
 *   <li>{@code request_percentage}: the time the request holds a request thread in its handler call (the
 *       synchronous part; waits for replication, long polls and coordinator work done elsewhere are not counted),
 *       for every API but ApiVersions, SASL and follower fetches.</li>
 * </ul>
 * A client over one of its quotas gets the throttle time in the response's {@code throttle_time_ms} (the largest
 * of the byte-rate and request-time throttles); the connection then stops reading for that time after sending the
 * response (KIP-219; see {@code KafkaConnectionHandler}), and clients wait as well. A produce with acks=0 has no
 * response: its completion is held back for the throttle time, which holds back the connection's next request.
 * The connection is never closed for being over quota. Follower fetches and requests forwarded between brokers
 * are exempt.
 *
 * <p>With no quota set anywhere, a request costs one volatile read more than without this class.
 *
 * <p>Thread-safe; called on request threads.
 */
final class ThrottlingApis implements RequestHandler {

    private final RequestHandler apis;
    private final ClientQuotaManager quotas;
    private final Time time;
    private final long windowMs;

    ThrottlingApis(RequestHandler apis, ClientQuotaManager quotas, Time time, long windowMs) {
        this.apis = apis;
        this.quotas = quotas;
        this.time = time;
        this.windowMs = windowMs;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(RequestContext context, AbstractRequest request) {
        if (!quotas.isEnabled() || isExempt(context, request)) {
            return apis.handle(context, request);
        }
        ApiKeys api = context.header.apiKey();
        String user = context.principal.getName();
        String clientId = context.clientId();
        QuotaType byteType = api == ApiKeys.PRODUCE ? QuotaType.PRODUCE
                : api == ApiKeys.FETCH || api == ApiKeys.SHARE_FETCH ? QuotaType.FETCH : null;
        Match byteQuota = byteType == null ? null : quotas.find(byteType, user, clientId);
        Match requestQuota = quotas.find(QuotaType.REQUEST, user, clientId);
        if (byteQuota == null && requestQuota == null) {
            return apis.handle(context, request);
        }
        if (byteQuota != null && request instanceof FetchRequest fetch) {
            long perWindow = (long) Math.max(1, byteQuota.quota() * windowMs / 1000.0);
            if (fetch.data().maxBytes() > perWindow) {
                fetch.data().setMaxBytes((int) Math.min(Integer.MAX_VALUE, perWindow));
            }
        }
        // counted before the handler runs: nothing it does to the request (releasing its records) changes the count
        long producedBytes = byteQuota != null && request instanceof ProduceRequest produce ? produceBytes(produce) : 0;
        long startNs = time.nanoseconds();
        CompletableFuture<AbstractResponse> response = apis.handle(context, request);
        long requestThrottleMs = requestQuota == null ? 0 : quotas.recordAndGetThrottleMs(QuotaType.REQUEST,
                requestQuota, (time.nanoseconds() - startNs) / 1_000_000.0);
        if (byteQuota == null && requestThrottleMs == 0) {
            return response;
        }
        return response.thenCompose(r -> {
            long throttleMs = requestThrottleMs;
            if (byteQuota != null) {
                throttleMs = Math.max(throttleMs, quotas.recordAndGetThrottleMs(byteType, byteQuota,
                        api == ApiKeys.PRODUCE ? producedBytes : responseBytes(r)));
            }
            if (throttleMs <= 0) {
                return CompletableFuture.completedFuture(r);
            }
            if (r == null) {
                // acks=0: nothing to carry the throttle time, so the connection's next request waits for it
                return CompletableFuture.supplyAsync(() -> null,
                        CompletableFuture.delayedExecutor(throttleMs, TimeUnit.MILLISECONDS));
            }
            r.maybeSetThrottleTimeMs((int) Math.min(Integer.MAX_VALUE, throttleMs));
            return CompletableFuture.completedFuture(r);
        });
    }

    private static boolean isExempt(RequestContext context, AbstractRequest request) {
        ApiKeys api = context.header.apiKey();
        return api == ApiKeys.API_VERSIONS || api == ApiKeys.SASL_HANDSHAKE || api == ApiKeys.SASL_AUTHENTICATE
                || request instanceof FetchRequest fetch && fetch.isFromFollower()
                || ControllerClient.isForwarded(context.clientId());
    }

    /** The bytes of the record batches a Produce request carries. */
    static long produceBytes(ProduceRequest request) {
        long bytes = 0;
        for (ProduceRequestData.TopicProduceData topic : request.data().topicData()) {
            for (ProduceRequestData.PartitionProduceData partition : topic.partitionData()) {
                bytes += size(partition.records());
            }
        }
        return bytes;
    }

    /** The bytes of the record batches a Fetch or ShareFetch response carries (0 for any other response). */
    static long responseBytes(AbstractResponse response) {
        long bytes = 0;
        if (response instanceof FetchResponse fetch) {
            for (FetchResponseData.FetchableTopicResponse topic : fetch.data().responses()) {
                for (FetchResponseData.PartitionData partition : topic.partitions()) {
                    bytes += size(partition.records());
                }
            }
        } else if (response instanceof ShareFetchResponse shareFetch) {
            for (ShareFetchResponseData.ShareFetchableTopicResponse topic : shareFetch.data().responses()) {
                for (ShareFetchResponseData.PartitionData partition : topic.partitions()) {
                    bytes += size(partition.records());
                }
            }
        }
        return bytes;
    }

    private static long size(BaseRecords records) {
        return records == null ? 0 : records.sizeInBytes();
    }

    @Override
    public CompletableFuture<Struct> handleExtension(ExtensionHeader header, ByteBuffer body) {
        return apis.handleExtension(header, body);
    }

    @Override
    public void onConnectionClosed(String connectionId) {
        apis.onConnectionClosed(connectionId);
    }
}
