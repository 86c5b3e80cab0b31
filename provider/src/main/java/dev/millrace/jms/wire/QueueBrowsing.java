package dev.millrace.jms.wire;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
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
import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ShareBrowse;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;

/**
 * Reads what is still on a queue through the broker's ShareBrowse extension ({@link ShareBrowse}): finds each
 * partition's leader with the admin client and asks it, over the connection's {@link ExtensionClient}.
 *
 * <p>Thread-safe.
 */
public final class QueueBrowsing {

    /** Bytes of record batches asked for per request. */
    static final int MAX_BYTES = 1024 * 1024;

    private final Admin admin;
    private final ExtensionClient client;
    private final ConnectionSettings settings;

    public QueueBrowsing(Admin admin, ExtensionClient client, ConnectionSettings settings) {
        this.admin = admin;
        this.client = client;
        this.settings = settings;
    }

    /** The leader of each partition of {@code topic}, by partition number. */
    public List<Node> leaders(String topic) throws JMSException {
        try {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(settings.requestTimeoutMs(), TimeUnit.MILLISECONDS).get(topic);
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
        if (leader == null || leader.isEmpty()) {
            throw new JMSException("partition " + partition + " of " + topic + " has no leader now");
        }
        ShareBrowse.Request request = new ShareBrowse.Request(groupId, topic, partition, fromOffset, MAX_BYTES);
        ShareBrowse.Response response;
        try {
            response = ShareBrowse.Response.read(client.call(leader.host(), leader.port(), ExtensionApi.SHARE_BROWSE,
                    ShareBrowse.VERSION, request.toStruct()));
        } catch (IOException e) {
            throw JmsExceptions.fromClient("browse partition " + partition + " of " + topic, e);
        }
        if (response.errorCode() != Errors.NONE.code()) {
            throw new JMSException("browse partition " + partition + " of " + topic + " failed: "
                    + Errors.forCode(response.errorCode()).name() + " " + response.errorMessage());
        }
        return response;
    }
}
