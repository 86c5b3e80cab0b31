package dev.millrace.broker.server;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.coordinator.CoordinatorLocator;
import dev.millrace.broker.txn.TransactionCoordinator;
import dev.millrace.broker.txn.TransactionStateTopic;

/**
 * Asks the coordinator of a transactional id whether partitions are in the producer's ongoing transaction, for a
 * Produce whose transactional batches would open a transaction on partitions led here ({@link ProduceHandler},
 * {@link dev.millrace.broker.log.TxnVerification}). The coordinator is the leader of the id's
 * {@code __transaction_state} partition in the latest metadata: this broker's own {@link TransactionCoordinator}
 * answers directly, another broker is sent Kafka's broker-to-broker AddPartitionsToTxn (version 4,
 * {@code verify_only} set; {@link TransactionHandler} answers it), over {@link BrokerRequestSender}.
 *
 * <p>Answers per partition: NONE, INVALID_TXN_STATE, PRODUCER_FENCED as the coordinator says; NOT_COORDINATOR,
 * COORDINATOR_LOAD_IN_PROGRESS while coordination moves; COORDINATOR_NOT_AVAILABLE when the id's partition has no
 * leader or the coordinator could not be reached (all retriable for the producer). Never completes exceptionally.
 *
 * <p>Thread-safe; futures complete on the calling thread (local coordinator) or the sender's event loop.
 */
final class TxnVerifier {

    private static final Logger log = LoggerFactory.getLogger(TxnVerifier.class);
    /** AddPartitionsToTxn version sent: 4, the first broker-to-broker version (verify_only). */
    static final short VERSION = 4;

    private final int nodeId;
    private final CoordinatorLocator txnLeaders;
    private final TransactionStateTopic txnTopic;
    private final TransactionCoordinator local;
    private final BrokerRequestSender sender;

    TxnVerifier(int nodeId, CoordinatorLocator txnLeaders, TransactionStateTopic txnTopic,
                TransactionCoordinator local, BrokerRequestSender sender) {
        this.nodeId = nodeId;
        this.txnLeaders = txnLeaders;
        this.txnTopic = txnTopic;
        this.local = local;
        this.sender = sender;
    }

    /** Whether each of {@code partitions} is in the ongoing transaction of {@code producerId} at {@code epoch}. */
    CompletableFuture<Map<TopicPartition, Errors>> verify(String transactionalId, long producerId, short epoch,
                                                          Collection<TopicPartition> partitions) {
        int partition = txnTopic.partitionFor(transactionalId);
        Optional<Node> leader = txnLeaders.leaderOf(partition);
        if (leader.isEmpty()) {
            return CompletableFuture.completedFuture(all(partitions, Errors.COORDINATOR_NOT_AVAILABLE));
        }
        if (leader.get().id() == nodeId) {
            Map<TopicPartition, Errors> out = new LinkedHashMap<>();
            partitions.forEach(tp -> out.put(tp, local.verifyTransactionalBatch(transactionalId, producerId, epoch,
                    tp)));
            return CompletableFuture.completedFuture(out);
        }
        AddPartitionsToTxnTopicCollection topics = new AddPartitionsToTxnTopicCollection();
        for (TopicPartition tp : partitions) {
            AddPartitionsToTxnTopic topic = topics.find(tp.topic());
            if (topic == null) {
                topic = new AddPartitionsToTxnTopic().setName(tp.topic());
                topics.add(topic);
            }
            topic.partitions().add(tp.partition());
        }
        AddPartitionsToTxnTransactionCollection transactions = new AddPartitionsToTxnTransactionCollection();
        transactions.add(new AddPartitionsToTxnTransaction().setTransactionalId(transactionalId)
                .setProducerId(producerId).setProducerEpoch(epoch).setVerifyOnly(true).setTopics(topics));
        int coordinator = leader.get().id();
        return sender.<AddPartitionsToTxnResponse>send(coordinator, AddPartitionsToTxnRequest.Builder.forBroker(
                transactions), VERSION).handle((response, error) -> {
                    if (error != null) {
                        log.debug("Verifying the transaction of {} with broker {} failed: {}", transactionalId,
                                coordinator, error.toString());
                        return all(partitions, Errors.COORDINATOR_NOT_AVAILABLE);
                    }
                    Errors top = Errors.forCode(response.data().errorCode());
                    Map<TopicPartition, Errors> answered = response.errors().getOrDefault(transactionalId, Map.of());
                    Map<TopicPartition, Errors> out = new LinkedHashMap<>();
                    partitions.forEach(tp -> out.put(tp, top != Errors.NONE ? top
                            : answered.getOrDefault(tp, Errors.UNKNOWN_SERVER_ERROR)));
                    return out;
                });
    }

    private static Map<TopicPartition, Errors> all(Collection<TopicPartition> partitions, Errors error) {
        Map<TopicPartition, Errors> out = new LinkedHashMap<>();
        partitions.forEach(tp -> out.put(tp, error));
        return out;
    }
}
