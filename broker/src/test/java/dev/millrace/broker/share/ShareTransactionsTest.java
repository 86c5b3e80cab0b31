package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;
import dev.millrace.protocol.ext.TxnAddSharePartition;
import dev.millrace.protocol.ext.TxnShareAcknowledge;

/**
 * TxnShareAcknowledge at a share-partition's leader, with the transaction coordinator faked
 * ({@link ShareTransactions.TransactionJoin}). A broker that does not lead the partition answers
 * NOT_LEADER_OR_FOLLOWER (clients retry at the leader they look up again; INVALID_RECORD_STATE, which the JMS provider
 * takes as final, made every later transacted commit of the session roll back). A hold asks the coordinator to add
 * the partition to the transaction and holds under the producer id it names; the marker for that producer on that
 * partition settles the hold, also when it arrives while the coordinator is being asked.
 */
@Timeout(10)
class ShareTransactionsTest {

    private static final TopicPartition TP = new TopicPartition("queue", 0);
    private static final Uuid TOPIC_ID = Uuid.randomUuid();

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private SharePartitionManager partitions;
    private ShareTransactions created;

    @AfterEach
    void closeTimer() {
        if (created != null) {
            created.close();
        }
        timer.close();
    }

    @Test
    void shouldAnswerNotLeaderWhereThePartitionIsLedElsewhere() {
        ShareTransactions transactions = transactions(new OneTopic(Optional.empty()));

        TxnShareAcknowledge.Response response = transactions.acknowledge(new TxnShareAcknowledge.Request("tx", "g",
                "member", TP.topic(), TP.partition(), List.of(0L))).join();

        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
    }

    @Test
    void shouldStillAnswerInvalidRecordStateOnTheLeaderWhenTheGroupAcquiredNothing() {
        ShareTransactions transactions = transactions(new OneTopic(Optional.of(new InMemoryShareLog())));

        TxnShareAcknowledge.Response response = transactions.acknowledge(new TxnShareAcknowledge.Request("tx", "g",
                "member", TP.topic(), TP.partition(), List.of(0L))).join();

        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.INVALID_RECORD_STATE);
    }

    @Test
    void shouldHoldUnderTheProducerIdTheCoordinatorNamesUntilThatProducersMarkerReachesThePartition() {
        InMemoryShareLog log = new InMemoryShareLog();
        ShareTransactions transactions = transactions(new OneTopic(Optional.of(log)));
        SharePartition partition = acquired(log, 3);
        List<String> asked = new ArrayList<>();
        transactions.setTransactions((id, tp) -> {
            asked.add(id + " " + tp);
            return CompletableFuture.completedFuture(new TxnAddSharePartition.Response((short) 0, null, 7, (short) 2));
        });

        TxnShareAcknowledge.Response response = transactions.acknowledge(new TxnShareAcknowledge.Request("tx", "g",
                "member", TP.topic(), TP.partition(), List.of(0L, 1L))).join();

        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.NONE);
        assertThat(asked).containsExactly("tx " + TP);
        transactions.onTransactionMarkers(8, true, List.of(TP)).join(); // another producer
        transactions.onTransactionMarkers(7, true, List.of(new TopicPartition("other", 0))).join(); // another partition
        assertThat(partition.state(0)).contains(RecordState.ACQUIRED);
        transactions.onTransactionMarkers(7, true, List.of(TP)).join();
        assertThat(partition.state(0)).contains(RecordState.ACKNOWLEDGED);
        assertThat(partition.state(1)).contains(RecordState.ACKNOWLEDGED);
        assertThat(partition.state(2)).contains(RecordState.ACQUIRED); // not in the transaction
    }

    @Test
    void shouldReleaseRecordsWhoseTransactionAbortedWhileTheCoordinatorWasAsked() {
        InMemoryShareLog log = new InMemoryShareLog();
        ShareTransactions transactions = transactions(new OneTopic(Optional.of(log)));
        SharePartition partition = acquired(log, 1);
        CompletableFuture<TxnAddSharePartition.Response> answer = new CompletableFuture<>();
        transactions.setTransactions((id, tp) -> answer);

        CompletableFuture<TxnShareAcknowledge.Response> response = transactions.acknowledge(
                new TxnShareAcknowledge.Request("tx", "g", "member", TP.topic(), TP.partition(), List.of(0L)));
        // the partition joined the transaction, which then timed out: its abort marker arrives before the answer
        transactions.onTransactionMarkers(7, false, List.of(TP)).join();
        answer.complete(new TxnAddSharePartition.Response((short) 0, null, 7, (short) 2));

        assertThat(Errors.forCode(response.join().errorCode())).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(partition.state(0)).contains(RecordState.AVAILABLE); // released, not held for good
        assertThat(partition.deliveryCount(0)).isEqualTo(1);
    }

    @Test
    void shouldHoldNothingWhenTheCoordinatorRefusesOrTheMemberDoesNotHoldTheRecords() {
        InMemoryShareLog log = new InMemoryShareLog();
        ShareTransactions transactions = transactions(new OneTopic(Optional.of(log)));
        SharePartition partition = acquired(log, 1);
        List<String> asked = new ArrayList<>();
        transactions.setTransactions((id, tp) -> {
            asked.add(id);
            return CompletableFuture.completedFuture(TxnAddSharePartition.Response.error(
                    Errors.INVALID_TXN_STATE.code(), null));
        });

        TxnShareAcknowledge.Response noTxn = transactions.acknowledge(new TxnShareAcknowledge.Request("tx", "g",
                "member", TP.topic(), TP.partition(), List.of(0L))).join();
        TxnShareAcknowledge.Response stranger = transactions.acknowledge(new TxnShareAcknowledge.Request("tx", "g",
                "stranger", TP.topic(), TP.partition(), List.of(0L))).join();

        assertThat(Errors.forCode(noTxn.errorCode())).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(noTxn.errorMessage()).contains("tx");
        assertThat(Errors.forCode(stranger.errorCode())).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(stranger.errorMessage()).contains("stranger");
        assertThat(asked).containsExactly("tx"); // the stranger's request never reached the coordinator
        // nothing is held: the member's own acceptance works as usual
        assertThat(partition.acknowledge("member", List.of(new AcknowledgementBatch(0, 0,
                new byte[] {AcknowledgeType.ACCEPT.id()})))).isEqualTo(Errors.NONE);
        assertThat(partition.state(0)).contains(RecordState.ACKNOWLEDGED);
    }

    private SharePartition acquired(InMemoryShareLog log, int records) {
        SharePartition partition = partitions.getOrCreate("g", TOPIC_ID, TP).orElseThrow();
        log.append(records); // after: a share group starts at the log's end
        assertThat(partition.acquire("member", 10, 1 << 20).records()).isNotNull();
        assertThat(partition.state(records - 1)).contains(RecordState.ACQUIRED);
        return partition;
    }

    private ShareTransactions transactions(ShareTopics topics) {
        SharePartitionListener quiet = new SharePartitionListener() {
            @Override
            public void onRecordsAvailable(SharePartitionKey key) {
            }

            @Override
            public void onArchived(DeadLetter deadLetter) {
            }
        };
        partitions = new SharePartitionManager(ShareGroupConfig.defaults(), topics, timer, clock, quiet,
                ShareStateStore.NONE);
        ShareTransactions transactions = new ShareTransactions(topics, partitions);
        created = transactions;
        transactions.setTransactions((id, tp) -> CompletableFuture.completedFuture(
                new TxnAddSharePartition.Response((short) 0, null, 7, (short) 0)));
        return transactions;
    }

    /**
     * The topic, with one partition whose log here is {@code local}: empty where another broker leads it and this
     * one hosts no replica of it; an {@link InMemoryShareLog} leads.
     */
    private record OneTopic(Optional<ShareLog> local) implements ShareTopics {

        @Override
        public Optional<Uuid> idOf(String topic) {
            return topic.equals(TP.topic()) ? Optional.of(TOPIC_ID) : Optional.empty();
        }

        @Override
        public Optional<String> nameOf(Uuid topicId) {
            return topicId.equals(TOPIC_ID) ? Optional.of(TP.topic()) : Optional.empty();
        }

        @Override
        public int partitionCount(String topic) {
            return topic.equals(TP.topic()) ? 1 : 0;
        }

        @Override
        public Optional<ShareLog> log(TopicPartition tp) {
            return tp.equals(TP) ? local : Optional.empty();
        }

        @Override
        public void append(TopicPartition tp, MemoryRecords records) {
            throw new AssertionError("nothing is appended here");
        }
    }
}
