package dev.millrace.bench.selector;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

import dev.millrace.protocol.jms.BodyType;
import dev.millrace.protocol.jms.JmsMessageData;
import dev.millrace.protocol.jms.JmsRecord;
import dev.millrace.protocol.jms.JmsRecordCodec;
import dev.millrace.protocol.selector.RecordSelectorContext;
import dev.millrace.protocol.selector.Selector;

/**
 * Cost of evaluating a compiled selector against one record, as the broker does when it decides which consumer gets
 * a record: {@link RecordSelectorContext} over the record's Kafka headers, reset per record.
 *
 * <p>The record: a text message written by {@link JmsRecordCodec} with JMSType, JMSPriority 6, a message id, a
 * correlation id and eight properties (String, int, long, double, boolean), 14 headers in all. Selectors
 * ({@link #SELECTORS}), each matching the record except {@code nonMatching}. Three ops per selector:
 * <ul>
 *   <li>{@code matches}: {@code selector.matches(ctx.reset(headers, key, timestamp, 1))}, the broker's path;</li>
 *   <li>{@code decodeThenMatch}: the baseline a lazy context avoids, decoding the whole record with
 *       {@link JmsRecordCodec#decode} and evaluating over its property map;</li>
 *   <li>{@code compile}: {@link Selector#compile}, paid once per consumer.</li>
 * </ul>
 * Run with the GC profiler ({@link SelectorBenchMain}) to see bytes allocated per op.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgs = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@Threads(1)
@State(Scope.Thread)
public class SelectorBenchmark {

    static final Map<String, String> SELECTORS = Map.of(
            "priority", "JMSPriority > 4",
            "stringAndInt", "color = 'red' AND weight > 2500",
            "in", "region IN ('EU', 'US', 'APAC')",
            "arithmetic", "JMSType = 'order' AND (price * quantity BETWEEN 1000 AND 5000 OR urgent)",
            "like", "sku LIKE 'ABC-%-X'",
            "nonMatching", "discount IS NOT NULL OR color <> 'red'");

    @Param({"priority", "stringAndInt", "in", "arithmetic", "like", "nonMatching"})
    public String selector;

    private Selector compiled;
    private String text;
    private JmsRecord record;
    private Headers headers;
    private byte[] key;
    private long timestampMs;
    private final RecordSelectorContext ctx = new RecordSelectorContext();

    @Setup
    public void setUp() {
        text = SELECTORS.get(selector);
        compiled = Selector.compile(text);
        record = JmsRecordCodec.encode(JmsMessageData.builder()
                .body(BodyType.TEXT, "hello".getBytes(StandardCharsets.UTF_8))
                .messageId("ID:5f0c2a4e-0001")
                .correlationId("req-42")
                .type("order")
                .priority(6)
                .timestamp(1_700_000_000_000L)
                .property("color", "red")
                .property("weight", 3000)
                .property("region", "APAC")
                .property("price", 12.5d)
                .property("quantity", 100)
                .property("urgent", false)
                .property("sku", "ABC-12345-X")
                .property("customerId", 9_876_543_210L)
                .build());
        headers = new RecordHeaders(record.headers().toArray(new Header[0]));
        key = record.key();
        timestampMs = record.timestamp();
        boolean expected = !selector.equals("nonMatching");
        if (matches() != expected || decodeThenMatch() != expected) {
            throw new IllegalStateException("selector " + text + " should " + (expected ? "" : "not ") + "match");
        }
    }

    @Benchmark
    public boolean matches() {
        return compiled.matches(ctx.reset(headers, key, timestampMs, 1));
    }

    @Benchmark
    public boolean decodeThenMatch() {
        JmsMessageData data = JmsRecordCodec.decode(record);
        return compiled.matches(id -> {
            switch (id) {
                case "JMSPriority":
                    return data.priority();
                case "JMSType":
                    return data.type();
                default:
                    return data.properties().get(id);
            }
        });
    }

    @Benchmark
    public Selector compile() {
        return Selector.compile(text);
    }
}
