package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;

/**
 * The share-state store over a log: what one store saved, full values and deltas, a new store replaying the same log
 * loads as the partition's state, after deltas were replaced by a full value and its tombstones too.
 */
@Timeout(30)
class LogShareStateStoreTest {

    private static final SharePartitionKey KEY = new SharePartitionKey("g", Uuid.randomUuid(),
            new TopicPartition("queue", 0));
    private static final TopicPartition STATE = new TopicPartition(LogShareStateStore.TOPIC, 0);

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final InMemoryShareLog queue = new InMemoryShareLog();
    private final InMemoryShareLog stateLog = new InMemoryShareLog();
    private final ShareTopics topics = new SingleLogTopics(STATE, stateLog);
    private final SharePartitionListener listener = QuietListener.INSTANCE;

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    @Test
    void shouldLoadWhatWasSavedAsFullValuesAndDeltasAfterAReplay() throws InterruptedException {
        LogShareStateStore store = new LogShareStateStore(topics, 1, clock);
        store.load();
        ShareGroupConfig config = ShareGroupConfig.defaults().withRecordLockDurationMs(50);
        SharePartition partition = new SharePartition(KEY, queue, config, timer, clock, listener, 0);
        partition.deltaAboveEntries(0);
        Random random = new Random(7);
        for (int op = 0; op < 600; op++) {
            if (op % 20 == 0) {
                String[] colors = new String[10];
                colors[random.nextInt(10)] = "red";
                colors[random.nextInt(10)] = "red";
                queue.appendColors(colors);
            }
            partition.acquire("reader", SharePartitionSelectorTest.RED, 1 + random.nextInt(3), 1 << 20);
            SharePartitionSnapshot snapshot = partition.snapshot();
            for (SharePartitionSnapshot.Entry e : snapshot.entries()) {
                if (e.state() == RecordState.ACQUIRED && random.nextInt(3) > 0) {
                    byte type = random.nextInt(5) == 0 ? AcknowledgeType.RELEASE.id() : AcknowledgeType.ACCEPT.id();
                    partition.acknowledge("reader", List.of(new AcknowledgementBatch(e.offset(), e.offset(),
                            new byte[] {type})));
                }
            }
            if (op == 300) {
                partition.saveFailed(); // the next save is a full value, replacing the deltas so far
            }
            store.save(partition);
        }

        List<Short> keyVersions = new ArrayList<>();
        int tombstones = 0;
        for (RecordBatch batch : stateLog.read(0, Integer.MAX_VALUE).batches()) {
            for (Record record : batch) {
                keyVersions.add(ShareStateSerde.keyVersion(record.key()));
                tombstones += record.hasValue() ? 0 : 1;
            }
        }
        assertThat(keyVersions.stream().filter(v -> v == 0).count()).as("full values").isEqualTo(2);
        assertThat(keyVersions.stream().filter(v -> v == ShareStateSerde.DELTA_KEY_VERSION).count())
                .as("deltas and their tombstones").isGreaterThan(800);
        assertThat(tombstones).as("the deltas the second full value replaced").isBetween(250, 300);

        LogShareStateStore restarted = new LogShareStateStore(topics, 1, clock);
        restarted.load();
        SharePartitionSnapshot loaded = restarted.load(KEY).orElseThrow();
        assertThat(normalized(loaded)).isEqualTo(normalized(partition.snapshot()));
        assertThat(loaded.entries()).hasSizeGreaterThan(20); // a state with entries, not an empty one
    }

    @Test
    void shouldForgetTheDeltasOfADeletedSharePartition() {
        LogShareStateStore store = new LogShareStateStore(topics, 1, clock);
        store.load();
        SharePartition partition = new SharePartition(KEY, queue, ShareGroupConfig.defaults(), timer, clock,
                listener, 0);
        partition.deltaAboveEntries(0);
        queue.append(10);
        for (int i = 0; i < 5; i++) {
            partition.acquire("m", 1, 1 << 20);
            store.save(partition);
        }
        store.delete("g", KEY.topicId(), 0);

        LogShareStateStore restarted = new LogShareStateStore(topics, 1, clock);
        restarted.load();
        assertThat(restarted.load(KEY)).isEmpty();
        assertThat(restarted.partitionsOf("g")).isEmpty();
    }

    @Test
    void shouldNameTheRecordItCannotReadWhenItLoads() {
        byte[] key = ShareStateSerde.deltaKey("g", KEY.topicId(), 0, 7);
        byte[] value = {0, 9, 1, 2}; // value version 9: not one this broker knows
        org.apache.kafka.common.record.internal.MemoryRecordsBuilder builder = MemoryRecords.builder(
                java.nio.ByteBuffer.allocate(256), org.apache.kafka.common.compress.Compression.NONE,
                org.apache.kafka.common.record.TimestampType.CREATE_TIME, 0L);
        builder.append(0L, ShareStateSerde.key("g", KEY.topicId(), 1), null);
        builder.append(0L, key, value);
        stateLog.appendRecords(builder.build());

        LogShareStateStore store = new LogShareStateStore(topics, 1, clock);
        org.assertj.core.api.Assertions.assertThatThrownBy(store::load)
                .hasMessageContaining("offset 1 of " + STATE)
                .hasMessageContaining("Unknown share-state value version 9");
    }

    /** The state as a restart sees it: held records available, never-delivered available entries dropped. */
    private static String normalized(SharePartitionSnapshot snapshot) {
        StringBuilder out = new StringBuilder("start=" + snapshot.startOffset() + " end=" + snapshot.endOffset());
        for (SharePartitionSnapshot.Entry e : snapshot.entries()) {
            RecordState state = e.state() == RecordState.ACQUIRED ? RecordState.AVAILABLE : e.state();
            if (state == RecordState.AVAILABLE && e.deliveryCount() == 0) {
                continue;
            }
            out.append(' ').append(e.offset()).append(':').append(state).append('/').append(e.deliveryCount());
        }
        return out.toString();
    }
}
