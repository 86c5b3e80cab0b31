package dev.millrace.broker.server;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

import dev.millrace.broker.coordinator.CoordinatorLocator;
import dev.millrace.broker.share.ShareTransactions;
import dev.millrace.broker.txn.TransactionStateTopic;
import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.TxnAddSharePartition;

/**
 * Adds a share-partition to a transaction at the transaction's coordinator, for {@link ShareTransactions}: the
 * coordinator of a transactional id is the leader of its {@code __transaction_state} partition
 * ({@code Utils.abs(id.hashCode()) % partitions}, as FindCoordinator answers), found in the latest metadata at each
 * call. This broker's own coordinator answers when it leads that partition ({@link TransactionHandler}); another broker is
 * asked with the TxnAddSharePartition extension ({@link TxnAddSharePartition}) over {@link BrokerRequestSender}.
 * A partition without a leader answers COORDINATOR_NOT_AVAILABLE; the client retries the whole hold.
 *
 * <p>Thread-safe; futures complete on the coordinator's thread or the sender's event loop.
 */
final class TxnShareJoin implements ShareTransactions.TransactionJoin {

    private final int nodeId;
    private final CoordinatorLocator txnLeaders;
    private final TransactionStateTopic txnTopic;
    private final Function<TxnAddSharePartition.Request, CompletableFuture<TxnAddSharePartition.Response>> local;
    private final BrokerRequestSender sender;

    TxnShareJoin(int nodeId, CoordinatorLocator txnLeaders, TransactionStateTopic txnTopic,
                 Function<TxnAddSharePartition.Request, CompletableFuture<TxnAddSharePartition.Response>> local,
                 BrokerRequestSender sender) {
        this.nodeId = nodeId;
        this.txnLeaders = txnLeaders;
        this.txnTopic = txnTopic;
        this.local = local;
        this.sender = sender;
    }

    @Override
    public CompletableFuture<TxnAddSharePartition.Response> addPartition(String transactionalId, TopicPartition tp) {
        int partition = txnTopic.partitionFor(transactionalId);
        Optional<Node> leader = txnLeaders.leaderOf(partition);
        if (leader.isEmpty()) {
            return CompletableFuture.completedFuture(TxnAddSharePartition.Response.error(
                    Errors.COORDINATOR_NOT_AVAILABLE.code(), "__transaction_state-" + partition + " has no leader"));
        }
        TxnAddSharePartition.Request request = new TxnAddSharePartition.Request(transactionalId, tp.topic(),
                tp.partition());
        if (leader.get().id() == nodeId) {
            return local.apply(request);
        }
        return sender.sendExtension(leader.get().id(), ExtensionApi.TXN_ADD_SHARE_PARTITION,
                TxnAddSharePartition.VERSION, request.toStruct()).thenApply(TxnAddSharePartition.Response::read);
    }
}
