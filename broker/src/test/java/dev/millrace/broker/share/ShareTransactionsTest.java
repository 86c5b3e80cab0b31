package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;
import dev.millrace.protocol.ext.TxnShareAcknowledge;

/**
 * TxnShareAcknowledge sent to a broker that does not lead the partition (a client that still names the leader from
 * before a failover) is answered NOT_LEADER_OR_FOLLOWER, which clients retry at the leader they look up again; it
 * was INVALID_RECORD_STATE, which the JMS provider takes as final, so that every transacted commit of a session
 * that consumed the partition rolled back from then on (the failover chaos suite's consume-transform-produce flow).
 */
@Timeout(10)
class ShareTransactionsTest {

    private static final TopicPartition TP = new TopicPartition("queue", 0);
    private static final Uuid TOPIC_ID = Uuid.randomUuid();

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    @Test
    void shouldAnswerNotLeaderWhereThePartitionIsLedElsewhere() {
        ShareTransactions transactions = transactions(new OneTopic(Optional.empty()));

        TxnShareAcknowledge.Response response = transactions.acknowledge(new TxnShareAcknowledge.Request("tx", "g",
                "client", TP.topic(), TP.partition(), List.of(0L)));

        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
    }

    @Test
    void shouldStillAnswerInvalidRecordStateOnTheLeaderWhenTheGroupAcquiredNothing() {
        ShareTransactions transactions = transactions(new OneTopic(Optional.of(new InMemoryShareLog())));

        TxnShareAcknowledge.Response response = transactions.acknowledge(new TxnShareAcknowledge.Request("tx", "g",
                "client", TP.topic(), TP.partition(), List.of(0L)));

        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.INVALID_RECORD_STATE);
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
        ShareGroupConfig config = ShareGroupConfig.defaults();
        SharePartitionManager partitions = new SharePartitionManager(config, topics, timer, clock, quiet,
                ShareStateStore.NONE);
        ShareTransactions transactions = new ShareTransactions(topics, partitions,
                new ShareGroupCoordinator(config, topics, timer, (group, member) -> { }));
        transactions.setTransactions(id -> OptionalLong.of(7));
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
