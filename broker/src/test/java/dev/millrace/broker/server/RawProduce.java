package dev.millrace.broker.server;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * Sends one hand-built Produce request over a plain socket, for batches a well-behaved client
 * would never send (a transactional batch without AddPartitionsToTxn, a late one, a marker), and throws the
 * partition's error as its exception.
 */
final class RawProduce {

    private static final short VERSION = 9;

    private final String host;
    private final int port;

    RawProduce(String bootstrap) {
        String[] parts = bootstrap.split(":");
        this.host = parts[0];
        this.port = Integer.parseInt(parts[1]);
    }

    /** A transactional batch of producer id 0, epoch 0, sequence 0 with one record. */
    void sendTransactional(String topic, int partition, String transactionalId) throws Exception {
        sendTransactional(topic, partition, transactionalId, 0L, (short) 0, 0);
    }

    /** A commit marker of {@code producerId} at {@code epoch}, as only transaction coordinators may write. */
    void sendMarker(String topic, int partition, String transactionalId, long producerId, short epoch)
            throws Exception {
        send(topic, partition, transactionalId, MemoryRecords.withEndTransactionMarker(System.currentTimeMillis(),
                producerId, epoch, new EndTransactionMarker(ControlRecordType.COMMIT, 0)));
    }

    /** A transactional batch of {@code producerId} at {@code epoch} with one record at {@code sequence}. */
    void sendTransactional(String topic, int partition, String transactionalId, long producerId, short epoch,
                           int sequence) throws Exception {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(256), RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.NONE, TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, producerId, epoch, sequence,
                true, RecordBatch.NO_PARTITION_LEADER_EPOCH);
        builder.append(System.currentTimeMillis(), null, "raw".getBytes());
        send(topic, partition, transactionalId, builder.build());
    }

    private void send(String topic, int partition, String transactionalId, MemoryRecords records) throws Exception {
        ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000)
                .setTransactionalId(transactionalId);
        ProduceRequestData.TopicProduceData topicData = new ProduceRequestData.TopicProduceData().setName(topic);
        topicData.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(partition)
                .setRecords(records));
        data.topicData().add(topicData);
        ProduceRequest request = new ProduceRequest.Builder(VERSION, VERSION, data).build(VERSION);
        RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, VERSION, "raw-produce", 1);
        try (Socket socket = new Socket(host, port)) {
            socket.setSoTimeout(30_000);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            ByteBuffer bytes = request.serializeWithHeader(header);
            out.writeInt(bytes.remaining());
            out.write(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] frame = new byte[in.readInt()];
            in.readFully(frame);
            ProduceResponse response = (ProduceResponse) AbstractResponse.parseResponse(ByteBuffer.wrap(frame), header);
            var result = response.data().responses().iterator().next().partitionResponses().get(0);
            Errors error = Errors.forCode(result.errorCode());
            if (error != Errors.NONE) {
                throw error.exception(result.errorMessage());
            }
        }
    }
}
