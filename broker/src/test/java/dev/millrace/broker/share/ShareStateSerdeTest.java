package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.List;

import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Round trips of the share-state records, runs included. */
@Timeout(10)
class ShareStateSerdeTest {

    @Test
    void shouldRoundTripKeysAndSnapshots() {
        Uuid topicId = Uuid.randomUuid();
        SharePartitionSnapshot snapshot = new SharePartitionSnapshot(10, 16, List.of(
                new SharePartitionSnapshot.Entry(10, RecordState.AVAILABLE, 2),
                new SharePartitionSnapshot.Entry(11, RecordState.ACKNOWLEDGED, 1),
                new SharePartitionSnapshot.Entry(12, RecordState.ACKNOWLEDGED, 1),
                new SharePartitionSnapshot.Entry(13, RecordState.ARCHIVED, 5),
                new SharePartitionSnapshot.Entry(14, RecordState.ACQUIRED, 1),
                new SharePartitionSnapshot.Entry(15, RecordState.ACQUIRED, 1)), 42);

        ShareStateSerde.StateKey key = ShareStateSerde.decodeKey(ByteBuffer.wrap(ShareStateSerde.key("gröup", topicId, 7)));
        SharePartitionSnapshot decoded = ShareStateSerde.decodeValue(ByteBuffer.wrap(ShareStateSerde.value(snapshot)));

        assertThat(key).isEqualTo(new ShareStateSerde.StateKey("gröup", topicId, 7));
        assertThat(decoded).isEqualTo(snapshot);
        assertThat(ShareStateSerde.value(snapshot)).hasSize(2 + 24 + 4 + 4 * 15 + 10 + 4); // four runs, no dead-letter copy owed, no hold
    }

    @Test
    void shouldRoundTripDeltaKeysAndApplyADeltaOverAFullValue() {
        Uuid topicId = Uuid.randomUuid();
        byte[] key = ShareStateSerde.deltaKey("gröup", topicId, 3, 99);
        assertThat(ShareStateSerde.keyVersion(ByteBuffer.wrap(key))).isEqualTo(ShareStateSerde.DELTA_KEY_VERSION);
        assertThat(ShareStateSerde.decodeDeltaKey(ByteBuffer.wrap(key))).isEqualTo(new ShareStateSerde.DeltaKey(
                new ShareStateSerde.StateKey("gröup", topicId, 3), 99));
        assertThatThrownBy(() -> ShareStateSerde.decodeKey(ByteBuffer.wrap(key)))
                .hasMessageContaining("Unknown share-state key version 2");

        SharePartitionSnapshot full = new SharePartitionSnapshot(10, 20, List.of(
                new SharePartitionSnapshot.Entry(10, RecordState.ACKNOWLEDGED, 1),
                new SharePartitionSnapshot.Entry(12, RecordState.ACQUIRED, 1),
                new SharePartitionSnapshot.Entry(15, RecordState.ACQUIRED, 2)), 5);
        // offset 10 passed by the start, 12 accepted, 18 newly acquired; 15 unchanged
        SharePartitionSnapshot delta = new SharePartitionSnapshot(11, 21, List.of(
                new SharePartitionSnapshot.Entry(12, RecordState.ACKNOWLEDGED, 1),
                new SharePartitionSnapshot.Entry(18, RecordState.ACQUIRED, 1)), 6);

        assertThat(ShareStateSerde.applyDeltas(full, List.of(delta))).isEqualTo(new SharePartitionSnapshot(11, 21,
                List.of(new SharePartitionSnapshot.Entry(12, RecordState.ACKNOWLEDGED, 1),
                        new SharePartitionSnapshot.Entry(15, RecordState.ACQUIRED, 2),
                        new SharePartitionSnapshot.Entry(18, RecordState.ACQUIRED, 1)), 6));
    }

    @Test
    void shouldApplySeveralDeltasInOnePassAsOneAfterAnother() {
        SharePartitionSnapshot full = new SharePartitionSnapshot(0, 4, List.of(
                new SharePartitionSnapshot.Entry(0, RecordState.ACQUIRED, 1),
                new SharePartitionSnapshot.Entry(3, RecordState.ACKNOWLEDGED, 1)), 1);
        List<SharePartitionSnapshot> deltas = List.of(
                new SharePartitionSnapshot(0, 6, List.of(
                        new SharePartitionSnapshot.Entry(5, RecordState.ACQUIRED, 1)), 2),
                new SharePartitionSnapshot(4, 6, List.of(
                        new SharePartitionSnapshot.Entry(0, RecordState.ACKNOWLEDGED, 1),
                        new SharePartitionSnapshot.Entry(4, RecordState.ARCHIVED, 0)), 3),
                new SharePartitionSnapshot(4, 7, List.of(
                        new SharePartitionSnapshot.Entry(5, RecordState.AVAILABLE, 1)), 4));

        SharePartitionSnapshot oneByOne = full;
        for (SharePartitionSnapshot delta : deltas) {
            oneByOne = ShareStateSerde.applyDeltas(oneByOne, List.of(delta));
        }

        assertThat(ShareStateSerde.applyDeltas(full, deltas)).isEqualTo(oneByOne).isEqualTo(new SharePartitionSnapshot(
                4, 7, List.of(new SharePartitionSnapshot.Entry(4, RecordState.ARCHIVED, 0),
                        new SharePartitionSnapshot.Entry(5, RecordState.AVAILABLE, 1)), 4));
        assertThat(ShareStateSerde.applyDeltas(full, List.of())).isSameAs(full);
    }

    @Test
    void shouldRoundTripGroupConfigsUnderTheirOwnKeyVersion() {
        ByteBuffer key = ByteBuffer.wrap(ShareStateSerde.groupConfigKey("gröup"));
        java.util.Map<String, String> configs = java.util.Map.of("share.auto.offset.reset", "earliest");

        assertThat(ShareStateSerde.keyVersion(key)).isEqualTo(ShareStateSerde.GROUP_CONFIG_KEY_VERSION);
        assertThat(ShareStateSerde.decodeGroupConfigKey(key)).isEqualTo("gröup");
        assertThat(ShareStateSerde.decodeGroupConfigValue(ByteBuffer.wrap(ShareStateSerde.groupConfigValue(configs))))
                .isEqualTo(configs);
        assertThat(ShareStateSerde.keyVersion(ByteBuffer.wrap(ShareStateSerde.key("g", Uuid.randomUuid(), 0))))
                .as("share-partition keys keep version 0").isZero();
    }

    @Test
    void shouldRoundTripTheDeadLetterCopiesOwedInArchiveOrder() {
        DeadLetterCopies.State owed = new DeadLetterCopies.State((short) 3, 17, List.of(
                new DeadLetterCopies.Pending(12, 5, DeadLetter.REASON_DELIVERY_LIMIT),
                new DeadLetterCopies.Pending(10, 1, DeadLetter.REASON_REJECTED)));
        SharePartitionSnapshot snapshot = new SharePartitionSnapshot(10, 13, List.of(
                new SharePartitionSnapshot.Entry(10, RecordState.ARCHIVED, 1),
                new SharePartitionSnapshot.Entry(12, RecordState.ARCHIVED, 5)), 8, owed);

        byte[] value = ShareStateSerde.value(snapshot);

        assertThat(ShareStateSerde.decodeValue(ByteBuffer.wrap(value))).isEqualTo(snapshot);
        assertThat(value).hasSize(2 + 24 + 4 + 2 * 15 + 10 + 2 * 11 + 4);
        assertThat(ShareStateSerde.valueVersion(value)).isEqualTo(8);
    }

    @Test
    void shouldRoundTripTheRecordsHeldForTransactionsAsRuns() {
        TransactionHolds.State holds = new TransactionHolds.State(List.of(
                new TransactionHolds.Run(7, 40, 10, 2), new TransactionHolds.Run(9, 41, 12, 1)));
        SharePartitionSnapshot snapshot = new SharePartitionSnapshot(10, 13, List.of(
                new SharePartitionSnapshot.Entry(10, RecordState.ACQUIRED, 1),
                new SharePartitionSnapshot.Entry(11, RecordState.ACQUIRED, 1),
                new SharePartitionSnapshot.Entry(12, RecordState.ACQUIRED, 3)), 8, DeadLetterCopies.State.EMPTY,
                holds);

        byte[] value = ShareStateSerde.value(snapshot);

        assertThat(ShareStateSerde.decodeValue(ByteBuffer.wrap(value))).isEqualTo(snapshot);
        assertThat(value).hasSize(2 + 24 + 4 + 2 * 15 + 10 + 4 + 2 * 28);
    }

    /** A value whose dead-letter or hold part claims more entries than it holds is refused, naming the count. */
    @Test
    void shouldRefuseAValueWhoseTrailerClaimsMoreEntriesThanItHolds() {
        byte[] value = ShareStateSerde.value(new SharePartitionSnapshot(0, 0, List.of(), 1));
        ByteBuffer copies = ByteBuffer.wrap(value.clone());
        copies.putInt(2 + 24 + 4 + 2 + 4, 1_000); // the pending dead-letter copies' count
        ByteBuffer holds = ByteBuffer.wrap(value.clone());
        holds.putInt(2 + 24 + 4 + 10, 7); // the hold runs' count

        assertThatThrownBy(() -> ShareStateSerde.decodeValue(copies)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("claims 1000 pending dead-letter copies");
        assertThatThrownBy(() -> ShareStateSerde.decodeValue(holds)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("claims 7 runs of transaction holds");
    }

    /** A value of version 0, as written before dead-letter copies were saved, reads as owing none. */
    @Test
    void shouldReadAVersionZeroValueAsOwingNoDeadLetterCopy() {
        ByteBuffer v0 = ByteBuffer.allocate(2 + 24 + 4 + 15);
        v0.putShort((short) 0).putLong(4).putLong(10).putLong(12).putInt(1)
                .putLong(10).putInt(2).put((byte) RecordState.ARCHIVED.ordinal()).putShort((short) 2);
        v0.flip();

        SharePartitionSnapshot decoded = ShareStateSerde.decodeValue(v0);

        assertThat(decoded).isEqualTo(new SharePartitionSnapshot(10, 12, List.of(
                new SharePartitionSnapshot.Entry(10, RecordState.ARCHIVED, 2),
                new SharePartitionSnapshot.Entry(11, RecordState.ARCHIVED, 2)), 4));
        assertThat(decoded.deadLetters()).isEqualTo(DeadLetterCopies.State.EMPTY);
    }

    @Test
    void shouldRejectAnUnknownVersion() {
        ByteBuffer value = ByteBuffer.wrap(ShareStateSerde.value(new SharePartitionSnapshot(0, 0, List.of(), 1)));
        value.putShort(0, (short) 9);

        assertThatThrownBy(() -> ShareStateSerde.decodeValue(value)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("version 9");
    }
}
