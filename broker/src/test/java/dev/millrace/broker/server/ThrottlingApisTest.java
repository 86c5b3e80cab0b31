package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.log.ManualTime;
import dev.millrace.broker.network.RequestHandler;
import dev.millrace.broker.quota.ClientQuotaManager;

/**
 * The quota wrapper on its own, on a manual clock: the request-time quota on handler time sets throttle_time_ms,
 * and a request no quota applies to passes through without allocating.
 */
@Timeout(30)
class ThrottlingApisTest {

    private final ManualTime time = new ManualTime(0);
    private final ClientQuotaManager quotas = new ClientQuotaManager(time, 11, 1000);
    private final ListOffsetsRequest request = ListOffsetsRequest.Builder
            .forConsumer(false, IsolationLevel.READ_UNCOMMITTED).build(ApiKeys.LIST_OFFSETS.latestVersion());

    @Test
    void shouldThrottleAClientOverItsRequestPercentageByItsHandlerTime() throws Exception {
        quotas.update(Map.of(new ClientQuotaEntity(Map.of("client-id", "busy")), Map.of("request_percentage", 1.0)));
        RequestHandler slow = (context, req) -> {
            time.advance(5); // 5 ms on the request thread
            return CompletableFuture.completedFuture(new ListOffsetsResponse(new ListOffsetsResponseData()));
        };
        ThrottlingApis apis = new ThrottlingApis(slow, quotas, time, 1000);
        // 1 % of a thread is 10 ms per second: 5 ms, recorded when the handler returns, are paid back in 500 ms
        AbstractResponse response = apis.handle(context("busy"), request).get(5, TimeUnit.SECONDS);
        assertThat(response.throttleTimeMs()).isEqualTo(500);
        response = apis.handle(context("idle"), request).get(5, TimeUnit.SECONDS);
        assertThat(response.throttleTimeMs()).isZero();
    }

    @Test
    void shouldHoldBackAnAcksZeroProduceOverItsByteRateForTheThrottleTime() throws Exception {
        quotas.update(Map.of(new ClientQuotaEntity(Map.of("client-id", "fire-and-forget")),
                Map.of("producer_byte_rate", 1000.0)));
        MemoryRecords records = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(new byte[200]));
        ProduceRequest produce = ProduceRequest.builder(new ProduceRequestData().setAcks((short) 0).setTimeoutMs(1000)
                .setTopicData(new ProduceRequestData.TopicProduceDataCollection(List.of(
                        new ProduceRequestData.TopicProduceData().setName("t").setPartitionData(List.of(
                                new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records))))
                        .iterator()))).build(ApiKeys.PRODUCE.latestVersion());
        ThrottlingApis apis = new ThrottlingApis((context, req) -> CompletableFuture.completedFuture(null), quotas,
                time, 1000);
        RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, ApiKeys.PRODUCE.latestVersion(),
                "fire-and-forget", 1);
        RequestContext context = new RequestContext(header, "connection-1", InetAddress.getLoopbackAddress(),
                KafkaPrincipal.ANONYMOUS, ListenerName.normalised("PLAINTEXT"), SecurityProtocol.PLAINTEXT,
                ClientInformation.EMPTY, false);
        long start = System.nanoTime();
        // no response to carry throttle_time_ms: the completion (and with it the connection's next request) waits
        CompletableFuture<AbstractResponse> done = apis.handle(context, produce);
        assertThat(done.get(5, TimeUnit.SECONDS)).isNull();
        long throttleMs = (long) Math.ceil(records.sizeInBytes() * 1000.0 / 1000.0);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(throttleMs);
    }

    @Test
    void shouldNotAllocateForARequestNoQuotaAppliesTo() {
        quotas.update(Map.of(new ClientQuotaEntity(Map.of("client-id", "someone-else")),
                Map.of("request_percentage", 1.0, "producer_byte_rate", 1000.0)));
        CompletableFuture<AbstractResponse> answer = CompletableFuture.completedFuture(
                new ListOffsetsResponse(new ListOffsetsResponseData()));
        ThrottlingApis apis = new ThrottlingApis((context, req) -> answer, quotas, time, 1000);
        RequestContext context = context("unlimited");
        for (int i = 0; i < 20_000; i++) {
            assertThat(apis.handle(context, request)).isSameAs(answer);
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
                .getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 10_000; i++) {
            apis.handle(context, request);
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(allocated).as("bytes allocated by 10,000 requests").isLessThan(10_000);
    }

    private static RequestContext context(String clientId) {
        RequestHeader header = new RequestHeader(ApiKeys.LIST_OFFSETS, ApiKeys.LIST_OFFSETS.latestVersion(),
                clientId, 1);
        return new RequestContext(header, "connection-1", InetAddress.getLoopbackAddress(), KafkaPrincipal.ANONYMOUS,
                ListenerName.normalised("PLAINTEXT"), SecurityProtocol.PLAINTEXT, ClientInformation.EMPTY, false);
    }
}
