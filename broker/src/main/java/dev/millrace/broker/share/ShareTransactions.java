package dev.millrace.broker.share;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

import dev.millrace.protocol.ext.TxnShareAcknowledge;

/**
 * Share acknowledgements inside producer transactions (the TxnShareAcknowledge extension,
 * {@link TxnShareAcknowledge}): holds a member's acquired records for an Ongoing transaction and settles them when
 * the transaction's markers are written, accepting on commit and releasing on abort.
 *
 * <p>Order of a holding request, which makes a marker never miss a held record: the share-partition is registered
 * under the producer id, the records are held, and then the transaction is looked up again; if it is no longer
 * Ongoing (its markers may already be written), the records are released at once and the request fails with
 * INVALID_TXN_STATE. A transaction stays Ongoing until its Prepare state is written, which comes before its markers.
 *
 * <p>Not durable yet: held records live in memory. A broker crash after a commit decision and before the
 * share-partition's state was saved delivers the records again (at least once, not exactly once, across a broker
 * crash); a crash of the consumer or its transaction's abort loses nothing.
 *
 * <p>Thread-safe.
 */
public final class ShareTransactions {

    /** What the share side needs of the transaction coordinator. */
    @FunctionalInterface
    public interface OngoingTransactions {
        /** The producer id of {@code transactionalId}'s transaction if it is Ongoing now. */
        OptionalLong ongoingProducerId(String transactionalId);
    }

    private final ShareTopics topics;
    private final SharePartitionManager partitions;
    private final ShareGroupCoordinator coordinator;
    private final Map<Long, Set<SharePartition>> held = new ConcurrentHashMap<>();
    private volatile OngoingTransactions transactions = id -> OptionalLong.empty();

    ShareTransactions(ShareTopics topics, SharePartitionManager partitions, ShareGroupCoordinator coordinator) {
        this.topics = Objects.requireNonNull(topics, "topics");
        this.partitions = Objects.requireNonNull(partitions, "partitions");
        this.coordinator = Objects.requireNonNull(coordinator, "coordinator");
    }

    /** Connects the transaction coordinator; until then every request fails with INVALID_TXN_STATE. */
    public void setTransactions(OngoingTransactions transactions) {
        this.transactions = Objects.requireNonNull(transactions, "transactions");
    }

    public TxnShareAcknowledge.Response acknowledge(TxnShareAcknowledge.Request request) {
        if (request.offsets().isEmpty()) {
            return error(Errors.INVALID_REQUEST, "offsets must not be empty");
        }
        if (request.transactionalId().isEmpty()) {
            return error(Errors.INVALID_REQUEST, "transactional_id must not be empty");
        }
        Optional<Uuid> topicId = topics.idOf(request.topic());
        if (topicId.isEmpty() || request.partition() < 0
                || request.partition() >= topics.partitionCount(request.topic())) {
            return error(Errors.UNKNOWN_TOPIC_OR_PARTITION, "no partition " + request.partition() + " of topic "
                    + request.topic());
        }
        TopicPartition tp = new TopicPartition(request.topic(), request.partition());
        Optional<SharePartition> partition = partitions.get(request.groupId(), tp);
        if (partition.isEmpty()) {
            // a broker that does not lead tp (any more) says so, so that the client looks the leader up again and
            // sends there: INVALID_RECORD_STATE here failed every transacted commit of a client that kept sending
            // to the old leader after a failover (the failover chaos suite's consume-transform-produce flow)
            if (partitions.notLeader(tp)) {
                return error(Errors.NOT_LEADER_OR_FOLLOWER, "this broker does not lead " + tp);
            }
            return error(Errors.INVALID_RECORD_STATE, "share group " + request.groupId() + " has acquired nothing of "
                    + tp);
        }
        List<String> members = coordinator.membersWithClientId(request.groupId(), request.memberClientId());
        if (members.size() != 1) {
            return error(members.isEmpty() ? Errors.UNKNOWN_MEMBER_ID : Errors.INVALID_REQUEST, members.isEmpty()
                    ? "share group " + request.groupId() + " has no member with client id " + request.memberClientId()
                    : members.size() + " members of " + request.groupId() + " have client id "
                    + request.memberClientId());
        }
        OptionalLong producerId = transactions.ongoingProducerId(request.transactionalId());
        if (producerId.isEmpty()) {
            return error(Errors.INVALID_TXN_STATE, "transactional id " + request.transactionalId()
                    + " has no ongoing transaction");
        }
        long pid = producerId.getAsLong();
        SharePartition sp = partition.get();
        held.computeIfAbsent(pid, k -> ConcurrentHashMap.newKeySet()).add(sp);
        Errors holdError = sp.holdForTransaction(members.get(0), request.offsets(), pid);
        if (holdError != Errors.NONE) {
            return error(holdError, "an offset of " + request.offsets() + " in " + tp + " is not acquired by client "
                    + request.memberClientId() + " (its lock may have expired)");
        }
        OptionalLong still = transactions.ongoingProducerId(request.transactionalId());
        if (still.isEmpty() || still.getAsLong() != pid) {
            sp.completeTransaction(pid, false);
            return error(Errors.INVALID_TXN_STATE, "the transaction of " + request.transactionalId()
                    + " ended while its acknowledgements were added");
        }
        return new TxnShareAcknowledge.Response(Errors.NONE.code(), null);
    }

    /** The markers of producer {@code producerId}'s transaction are written: settle what it held. */
    public void onTransactionMarkers(long producerId, boolean commit) {
        Set<SharePartition> partitionsHeld = held.remove(producerId);
        if (partitionsHeld != null) {
            partitionsHeld.forEach(p -> p.completeTransaction(producerId, commit));
        }
    }

    private static TxnShareAcknowledge.Response error(Errors error, String message) {
        return new TxnShareAcknowledge.Response(error.code(), message);
    }
}
