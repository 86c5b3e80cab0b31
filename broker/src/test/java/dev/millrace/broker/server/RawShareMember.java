package dev.millrace.broker.server;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;

/**
 * A share-group member of one single-partition topic that speaks ShareGroupHeartbeat and ShareFetch itself, over two
 * plain sockets (heartbeats on one, fetches on the other, so a heartbeat can go while a fetch is parked), with a
 * member id of the test's choosing. It acquires and never settles anything on its own.
 *
 * <p>Not thread-safe: one test thread drives it.
 */
final class RawShareMember implements AutoCloseable {

    private static final short HEARTBEAT_VERSION = 1;
    private static final short FETCH_VERSION = 1;

    private final String groupId;
    private final String memberId;
    private final Socket control;
    private final Socket fetches;
    private Uuid topicId;
    private int sessionEpoch;
    private int correlationId;
    private RequestHeader pendingFetch;

    RawShareMember(BrokerServer broker, String groupId, String memberId) throws IOException {
        this.groupId = groupId;
        this.memberId = memberId;
        this.control = connect(broker);
        this.fetches = connect(broker);
    }

    static Socket connect(BrokerServer broker) throws IOException {
        Socket socket = new Socket("127.0.0.1", broker.boundAddress().getPort());
        socket.setSoTimeout(30_000);
        return socket;
    }

    String memberId() {
        return memberId;
    }

    /** Joins the group subscribed to {@code topic}, which must exist; its id, from the assignment. */
    Uuid join(String topic) throws IOException {
        ShareGroupHeartbeatResponseData joined = heartbeat(new ShareGroupHeartbeatRequestData().setGroupId(groupId)
                .setMemberId(memberId).setMemberEpoch(0).setSubscribedTopicNames(List.of(topic)));
        if (joined.errorCode() != Errors.NONE.code() || joined.assignment() == null
                || joined.assignment().topicPartitions().isEmpty()) {
            throw new AssertionError("member " + memberId + " could not join " + groupId + " on " + topic + ": "
                    + joined);
        }
        topicId = joined.assignment().topicPartitions().get(0).topicId();
        return topicId;
    }

    /** Leaves the group (heartbeat epoch -1). */
    ShareGroupHeartbeatResponseData leave() throws IOException {
        return heartbeat(new ShareGroupHeartbeatRequestData().setGroupId(groupId).setMemberId(memberId)
                .setMemberEpoch(-1));
    }

    /** One ShareFetch of partition 0 (the next session epoch), waiting up to {@code maxWaitMs} for records. */
    ShareFetchResponseData fetch(int maxWaitMs) throws IOException {
        sendFetch(maxWaitMs);
        return awaitFetch();
    }

    /** Sends a ShareFetch and returns without its answer ({@link #awaitFetch}); it may park at the broker. */
    void sendFetch(int maxWaitMs) throws IOException {
        ShareFetchRequestData.FetchTopic topic = new ShareFetchRequestData.FetchTopic().setTopicId(topicId);
        topic.partitions().add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(0));
        ShareFetchRequestData data = new ShareFetchRequestData().setGroupId(groupId).setMemberId(memberId)
                .setShareSessionEpoch(sessionEpoch).setMaxWaitMs(maxWaitMs).setMinBytes(1).setMaxBytes(1 << 20)
                .setMaxRecords(100).setBatchSize(100);
        data.topics().add(topic);
        sessionEpoch++;
        pendingFetch = new RequestHeader(ApiKeys.SHARE_FETCH, FETCH_VERSION, memberId, ++correlationId);
        write(fetches, new ShareFetchRequest.Builder(data).build(FETCH_VERSION), pendingFetch);
    }

    ShareFetchResponseData awaitFetch() throws IOException {
        ShareFetchResponse response = (ShareFetchResponse) AbstractResponse.parseResponse(read(fetches), pendingFetch);
        pendingFetch = null;
        return response.data();
    }

    /** The acquired ranges of a fetch response, all partitions together. */
    static List<ShareFetchResponseData.AcquiredRecords> acquired(ShareFetchResponseData response) {
        List<ShareFetchResponseData.AcquiredRecords> out = new ArrayList<>();
        response.responses().forEach(t -> t.partitions().forEach(p -> out.addAll(p.acquiredRecords())));
        return out;
    }

    /** The acquired offsets of a fetch response. */
    static List<Long> acquiredOffsets(ShareFetchResponseData response) {
        List<Long> out = new ArrayList<>();
        for (ShareFetchResponseData.AcquiredRecords range : acquired(response)) {
            for (long o = range.firstOffset(); o <= range.lastOffset(); o++) {
                out.add(o);
            }
        }
        return out;
    }

    private ShareGroupHeartbeatResponseData heartbeat(ShareGroupHeartbeatRequestData data) throws IOException {
        RequestHeader header = new RequestHeader(ApiKeys.SHARE_GROUP_HEARTBEAT, HEARTBEAT_VERSION, memberId,
                ++correlationId);
        write(control, new ShareGroupHeartbeatRequest.Builder(data).build(HEARTBEAT_VERSION), header);
        return ((ShareGroupHeartbeatResponse) AbstractResponse.parseResponse(read(control), header)).data();
    }

    private static void write(Socket socket, AbstractRequest request, RequestHeader header) throws IOException {
        ByteBuffer bytes = request.serializeWithHeader(header);
        writeFrame(socket, bytes);
    }

    /** Writes {@code body} with its 4-byte size before it. */
    static void writeFrame(Socket socket, ByteBuffer body) throws IOException {
        ByteBuffer frame = ByteBuffer.allocate(4 + body.remaining());
        frame.putInt(body.remaining()).put(body.duplicate()).flip();
        OutputStream out = socket.getOutputStream();
        out.write(frame.array(), 0, frame.remaining());
        out.flush();
    }

    /** Reads one size-prefixed frame. */
    static ByteBuffer read(Socket socket) throws IOException {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        byte[] bytes = new byte[in.readInt()];
        in.readFully(bytes);
        return ByteBuffer.wrap(bytes);
    }

    /** Closes the fetch socket only (a fetch parked on it is left unanswered); the member stays in the group. */
    void closeFetches() throws IOException {
        fetches.close();
    }

    @Override
    public void close() throws IOException {
        try {
            fetches.close();
        } finally {
            control.close();
        }
    }
}
