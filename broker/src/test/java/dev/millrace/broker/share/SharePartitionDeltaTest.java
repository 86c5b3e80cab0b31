package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;

/**
 * Delta saves: after every kind of state change, the last full value with the deltas since applied is the partition's
 * state, so a restart restores what a full value would have. Random operations on a manual clock, with saves turned to
 * deltas from the first entry on.
 */
@Timeout(30)
class SharePartitionDeltaTest {

    private static final SharePartitionKey KEY = new SharePartitionKey("g", Uuid.randomUuid(),
            new TopicPartition("queue", 0));
    private static final String[] COLORS = {"red", "blue", null};

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final InMemoryShareLog log = new InMemoryShareLog();
    private final SharePartitionListener listener = QuietListener.INSTANCE;

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    @Test
    void shouldRebuildTheStateFromTheLastFullValueAndTheDeltasAfterEveryChange() throws InterruptedException {
        ShareGroupConfig config = ShareGroupConfig.defaults().withRecordLockDurationMs(50).withDeliveryCountLimit(3);
        SharePartition partition = new SharePartition(KEY, log, config, timer, clock, listener, 0);
        partition.deltaAboveEntries(0);
        Random random = new Random(42);
        SharePartitionSnapshot saved = null;
        int deltas = 0;
        int fulls = 0;
        List<String> members = List.of("red-reader", "any-reader", "subscriber");
        for (int op = 0; op < 3_000; op++) {
            int kind = random.nextInt(10);
            if (kind == 0 || log.highWatermark() == 0) {
                String[] colors = new String[1 + random.nextInt(8)];
                for (int i = 0; i < colors.length; i++) {
                    colors[i] = COLORS[random.nextInt(COLORS.length)];
                }
                log.appendColors(colors);
            } else if (kind <= 3) {
                int who = random.nextInt(3);
                MemberFilter filter = who == 0 ? SharePartitionSelectorTest.RED
                        : who == 2 ? new MemberFilter(SharePartitionSelectorTest.BLUE.selector(), true) : null;
                partition.acquire(members.get(who), filter, 1 + random.nextInt(5), 1 << 20);
            } else if (kind <= 6) {
                acknowledgeSome(partition, members, random);
            } else if (kind == 7) {
                clock.advanceMs(1 + random.nextInt(60)); // locks expire now and then
                while (timer.advanceClock(0)) {
                    // run what is due
                }
            } else if (kind == 8 && random.nextInt(10) == 0) {
                partition.releaseMember(members.get(random.nextInt(3)));
            }
            SharePartition.EncodedState state = partition.encodedState();
            SharePartitionSnapshot value = ShareStateSerde.decodeValue(ByteBuffer.wrap(state.value()));
            if (state.full()) {
                fulls++;
                saved = value;
            } else {
                deltas++;
                assertThat(saved).as("a delta needs a full value before it").isNotNull();
                saved = ShareStateSerde.applyDeltas(saved, List.of(value));
            }
            assertThat(normalized(saved)).as("op " + op).isEqualTo(normalized(partition.snapshot()));
        }
        assertThat(deltas).isGreaterThan(2_000);
        assertThat(fulls).isGreaterThanOrEqualTo(1);

        SharePartition restored = new SharePartition(KEY, log, config, timer, clock, listener, 0);
        restored.restore(saved);
        assertThat(normalized(restored.snapshot())).isEqualTo(normalized(afterRestart(partition.snapshot())));
    }

    @Test
    void shouldWriteAFullValueAfterAFailedSaveAndAfterTheStateIsReplaced() {
        SharePartition partition = new SharePartition(KEY, log, ShareGroupConfig.defaults(), timer, clock, listener,
                0);
        partition.deltaAboveEntries(0);
        log.append(10);
        partition.acquire("m", 5, 1 << 20);
        assertThat(partition.encodedState().full()).isTrue(); // the first save
        partition.acquire("m", 5, 1 << 20);
        assertThat(partition.encodedState().full()).isFalse();

        partition.acknowledge("m", List.of(new AcknowledgementBatch(0, 9, new byte[] {AcknowledgeType.ACCEPT.id()})));
        partition.saveFailed(); // the delta holding the acceptances was taken, then not written
        SharePartition.EncodedState next = partition.encodedState();
        assertThat(next.full()).isTrue();
        assertThat(ShareStateSerde.decodeValue(ByteBuffer.wrap(next.value())).startOffset()).isEqualTo(10);

        partition.resetTo(3);
        assertThat(partition.encodedState().full()).isTrue();
    }

    @Test
    void shouldKeepDeltasSmallWhereAFullValueGrowsWithTheState() {
        SharePartition partition = new SharePartition(KEY, log, ShareGroupConfig.defaults(), timer, clock, listener,
                0);
        partition.deltaAboveEntries(100);
        // a selective queue: one red record in ten, nobody reading the rest, so every delivered red stays an entry
        for (int batch = 0; batch < 200; batch++) {
            String[] colors = new String[10];
            colors[0] = "red";
            log.appendColors(colors);
        }
        int largestDelta = 0;
        int largestFull = 0;
        for (int fetch = 0; fetch < 100; fetch++) {
            partition.acquire("red-reader", SharePartitionSelectorTest.RED, 2, 1 << 20);
            SharePartitionSnapshot snapshot = partition.snapshot();
            long last = snapshot.entries().get(snapshot.entries().size() - 1).offset();
            partition.acknowledge("red-reader", List.of(new AcknowledgementBatch(last, last,
                    new byte[] {AcknowledgeType.ACCEPT.id()})));
            SharePartition.EncodedState state = partition.encodedState();
            if (state.full()) {
                largestFull = Math.max(largestFull, state.value().length);
            } else {
                largestDelta = Math.max(largestDelta, state.value().length);
            }
        }
        // 200 entries by the end, one run each (unmatched records between them): a full value of 200 runs
        assertThat(partition.snapshot().entries()).hasSize(200);
        assertThat(ShareStateSerde.value(partition.snapshot()).length).isGreaterThan(200 * 15);
        assertThat(largestDelta).isLessThanOrEqualTo(2 + 24 + 4 + 2 * 15 + 10 + 4); // the two records this fetch changed
    }

    private static void acknowledgeSome(SharePartition partition, List<String> members, Random random) {
        SharePartitionSnapshot snapshot = partition.snapshot();
        List<SharePartitionSnapshot.Entry> acquired = new ArrayList<>();
        for (SharePartitionSnapshot.Entry e : snapshot.entries()) {
            if (e.state() == RecordState.ACQUIRED) {
                acquired.add(e);
            }
        }
        if (acquired.isEmpty()) {
            return;
        }
        SharePartitionSnapshot.Entry e = acquired.get(random.nextInt(acquired.size()));
        AcknowledgeType[] types = {AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT};
        byte type = types[random.nextInt(types.length)].id();
        // the holder is not known from a snapshot: every member tries, only the holder's acknowledgement applies
        for (String member : members) {
            partition.acknowledge(member, List.of(new AcknowledgementBatch(e.offset(), e.offset(), new byte[] {type})));
        }
    }

    /** What a restart makes of a state: held records come back available. */
    /**
     * What a new leader holds after restoring {@code snapshot}: acquired records available again, or archived when
     * that acquisition was their last delivery allowed ({@code limit}), the start offset past the settled head.
     */
    /** Acquired records come back available with their counts (those at the limit are archived when next acquired). */
    private static SharePartitionSnapshot afterRestart(SharePartitionSnapshot snapshot) {
        java.util.TreeMap<Long, SharePartitionSnapshot.Entry> entries = new java.util.TreeMap<>();
        for (SharePartitionSnapshot.Entry e : snapshot.entries()) {
            RecordState state = e.state() != RecordState.ACQUIRED ? e.state() : RecordState.AVAILABLE;
            entries.put(e.offset(), new SharePartitionSnapshot.Entry(e.offset(), state, e.deliveryCount()));
        }
        long start = snapshot.startOffset();
        while (entries.containsKey(start) && entries.get(start).state().isTerminal()) {
            entries.remove(start++);
        }
        return new SharePartitionSnapshot(start, snapshot.endOffset(), new ArrayList<>(entries.values()), 0);
    }

    /** The state without its version, an available never-delivered entry being the same as none. */
    private static String normalized(SharePartitionSnapshot snapshot) {
        StringBuilder out = new StringBuilder("start=" + snapshot.startOffset() + " end=" + snapshot.endOffset());
        for (SharePartitionSnapshot.Entry e : snapshot.entries()) {
            if (e.state() == RecordState.AVAILABLE && e.deliveryCount() == 0) {
                continue;
            }
            out.append(' ').append(e.offset()).append(':').append(e.state()).append('/').append(e.deliveryCount());
        }
        return out.toString();
    }
}
