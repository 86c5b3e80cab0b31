package dev.millrace.jms.wire;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.protocol.Errors;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.JmsExceptions;
import dev.millrace.jms.wire.failover.RetryWindow;
import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ShareBrowse;
import dev.millrace.protocol.ext.TxnShareAcknowledge;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;

/**
 * The Millrace extension requests a connection makes, each sent to the leader of the partition it concerns
 * (found with the admin client, cached per topic, looked up again after a failure), over the connection's
 * {@link ExtensionClient}: ShareBrowse ({@link ShareBrowse}) for queue browsers, TxnShareAcknowledge
 * ({@link TxnShareAcknowledge}) for transacted sessions. A lost connection or NOT_LEADER_OR_FOLLOWER (the leader
 * moved) looks the leader up again and retries, within the failover window ({@link RetryWindow}).
 *
 * <p>Thread-safe.
 */
public final class BrokerExtensions {

    /** Bytes of record batches asked for per request. */
    static final int MAX_BYTES = 1024 * 1024;

    private final Admin admin;
    private final ExtensionClient client;
    private final ConnectionSettings settings;
    private final Map<String, List<Node>> leaderCache = new ConcurrentHashMap<>();
    private final RetryWindow window;

    public BrokerExtensions(Admin admin, ExtensionClient client, ConnectionSettings settings) {
        this.admin = admin;
        this.client = client;
        this.settings = settings;
        this.window = RetryWindow.of(settings.failoverTimeoutMs());
    }

    /** The leader of each partition of {@code topic}, by partition number; asks the brokers every time. */
    public List<Node> leaders(String topic) throws JMSException {
        List<Node> fresh = describeLeaders(topic);
        leaderCache.put(topic, fresh);
        return fresh;
    }

    /**
     * Holds {@code offsets}, acquired by the share consumer with member id {@code memberId}, for the open
     * transaction of {@code transactionalId}: its commit accepts them, its abort releases them.
     *
     * @throws JMSException naming the broker's error (INVALID_RECORD_STATE when a lock expired first)
     */
    public void holdForTransaction(String transactionalId, String groupId, String memberId, String topic,
                                   int partition, List<Long> offsets) throws JMSException {
        TxnShareAcknowledge.Request request = new TxnShareAcknowledge.Request(transactionalId, groupId,
                memberId, topic, partition, offsets);
        boolean[] retry = {false};
        TxnShareAcknowledge.Response response = window.call("accept messages of " + topic + " in a transaction",
                () -> {
                    List<Node> leaders = retry[0] ? null : leaderCache.get(topic);
                    retry[0] = true;
                    if (leaders == null || partition >= leaders.size()) {
                        leaders = leaders(topic); // first use, or the leader may have moved
                    }
                    TxnShareAcknowledge.Response r = call(leaders.get(partition), request);
                    Errors error = Errors.forCode(r.errorCode());
                    if (RetryWindow.isRetriableError(error)) {
                        throw new JMSException(topic + " partition " + partition + ": " + error.name(), error.name());
                    }
                    return r;
                });
        if (response.errorCode() != Errors.NONE.code()) {
            throw new JMSException("accepting messages of " + topic + " (partition " + partition
                    + ") in the transaction failed: " + Errors.forCode(response.errorCode()).name() + " "
                    + response.errorMessage(), Errors.forCode(response.errorCode()).name());
        }
    }

    private TxnShareAcknowledge.Response call(Node leader, TxnShareAcknowledge.Request request) throws IOException {
        if (leader == null || leader.isEmpty()) {
            throw new IOException("partition " + request.partition() + " of " + request.topic() + " has no leader");
        }
        return TxnShareAcknowledge.Response.read(client.call(leader.host(), leader.port(),
                ExtensionApi.TXN_SHARE_ACKNOWLEDGE, TxnShareAcknowledge.VERSION, request.toStruct()));
    }

    private List<Node> describeLeaders(String topic) throws JMSException {
        try {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS).get(topic);
            List<Node> out = new ArrayList<>();
            for (TopicPartitionInfo p : d.partitions()) {
                out.add(p.leader());
            }
            return out;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
                throw new InvalidDestinationException("queue " + topic + " does not exist");
            }
            throw JmsExceptions.fromClient("find the partitions of " + topic, e.getCause());
        } catch (TimeoutException e) {
            throw JmsExceptions.fromClient("find the partitions of " + topic, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw JmsExceptions.fromClient("find the partitions of " + topic, e);
        }
    }

    /** One ShareBrowse round trip; a response with an error code becomes a JMSException naming it. */
    public ShareBrowse.Response browse(Node leader, String groupId, String topic, int partition, long fromOffset)
            throws JMSException {
        ShareBrowse.Request request = new ShareBrowse.Request(groupId, topic, partition, fromOffset, MAX_BYTES);
        Node[] target = {leader};
        ShareBrowse.Response response = window.call("browse partition " + partition + " of " + topic, () -> {
            Node to = target[0];
            target[0] = null; // a retry asks for the leader again
            if (to == null) {
                List<Node> leaders = leaders(topic);
                to = partition < leaders.size() ? leaders.get(partition) : null;
            }
            if (to == null || to.isEmpty()) {
                throw new IOException("partition " + partition + " of " + topic + " has no leader now");
            }
            ShareBrowse.Response r = ShareBrowse.Response.read(client.call(to.host(), to.port(),
                    ExtensionApi.SHARE_BROWSE, ShareBrowse.VERSION, request.toStruct()));
            Errors error = Errors.forCode(r.errorCode());
            if (RetryWindow.isRetriableError(error)) {
                throw new JMSException(topic + " partition " + partition + ": " + error.name(), error.name());
            }
            return r;
        });
        if (response.errorCode() != Errors.NONE.code()) {
            throw new JMSException("browse partition " + partition + " of " + topic + " failed: "
                    + Errors.forCode(response.errorCode()).name() + " " + response.errorMessage());
        }
        return response;
    }
}
