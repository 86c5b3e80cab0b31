package dev.millrace.broker.server;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;

/**
 * A client connection on a plain socket that sends whatever bytes a test asks for: well-formed requests built with
 * kafka-clients' request classes, or frames no well-behaved client would send. Not thread-safe.
 */
public final class RawConnection implements AutoCloseable {

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;

    private RawConnection(Socket socket) throws IOException {
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.in = new DataInputStream(socket.getInputStream());
    }

    /** Connects to {@code broker} from 127.0.0.1; reads time out after {@code readTimeoutMs}. */
    static RawConnection open(InetSocketAddress broker, int readTimeoutMs) throws IOException {
        return open("127.0.0.1", broker, readTimeoutMs);
    }

    /** Connects from {@code localHost} (any loopback address: 127.0.0.2 is another client IP; 0.0.0.0: any). */
    public static RawConnection open(String localHost, InetSocketAddress broker, int readTimeoutMs) throws IOException {
        Socket socket = new Socket();
        try {
            socket.bind(new InetSocketAddress(localHost, 0));
            socket.connect(broker, readTimeoutMs);
            socket.setSoTimeout(readTimeoutMs);
            socket.setTcpNoDelay(true);
            return new RawConnection(socket);
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    /** The client's side of the connection, as the broker's log names it ({@code /127.0.0.1:port}). */
    String localAddress() {
        return socket.getLocalSocketAddress().toString();
    }

    void sendRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Sends {@code body} after a size prefix saying {@code body.remaining()} bytes. */
    void sendFrame(ByteBuffer body) throws IOException {
        sendRaw(frame(body));
    }

    public void sendRequest(AbstractRequest request, int correlationId) throws IOException {
        sendFrame(serialize(request, correlationId));
    }

    /** ApiVersions v3 with {@code correlationId}. */
    void sendApiVersions(int correlationId) throws IOException {
        sendRequest(new ApiVersionsRequest.Builder(new ApiVersionsRequestData().setClientSoftwareName("raw")
                .setClientSoftwareVersion("1"), (short) 3, (short) 3).build((short) 3), correlationId);
    }

    /** Reads one response frame (its size prefix taken off); throws EOFException when the broker closed. */
    ByteBuffer readFrame() throws IOException {
        int size = in.readInt();
        byte[] frame = new byte[size];
        in.readFully(frame);
        return ByteBuffer.wrap(frame);
    }

    /** Reads and parses the response to a request sent with {@code header}. */
    public AbstractResponse readResponse(RequestHeader header) throws IOException {
        return AbstractResponse.parseResponse(readFrame(), header);
    }

    /**
     * Reads until the broker closes the connection, discarding responses; true when it did within the read timeout
     * (an end of stream or a reset), false when the timeout passed first.
     */
    boolean awaitClosedByBroker() throws IOException {
        byte[] sink = new byte[64 * 1024];
        try {
            while (in.read(sink) >= 0) {
                // responses to earlier requests: not what this waits for
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException | EOFException e) {
            return true; // reset by the broker
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    static ByteBuffer serialize(AbstractRequest request, int correlationId) {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), "raw", correlationId);
        return request.serializeWithHeader(header);
    }

    /** Header and body of request {@code data} in {@code version}, as kafka-clients would write them. */
    static ByteBuffer serialize(ApiMessage data, short version, int correlationId) {
        RequestHeader header = new RequestHeader(ApiKeys.forId(data.apiKey()), version, "raw", correlationId);
        return RequestUtils.serialize(header.data(), header.headerVersion(), data, version);
    }

    public static RequestHeader header(AbstractRequest request, int correlationId) {
        return new RequestHeader(request.apiKey(), request.version(), "raw", correlationId);
    }

    static byte[] frame(ByteBuffer body) {
        ByteBuffer out = ByteBuffer.allocate(4 + body.remaining());
        out.putInt(body.remaining()).put(body.duplicate());
        return out.array();
    }

    /** A frame whose header is {@code apiKey}/{@code version}, correlation id 7, client id "raw", then {@code body}. */
    static ByteBuffer headerThen(short apiKey, short version, byte[] body) {
        ByteBuffer out = ByteBuffer.allocate(2 + 2 + 4 + 2 + 3 + 1 + body.length);
        out.putShort(apiKey).putShort(version).putInt(7).putShort((short) 3).put("raw".getBytes())
                .put((byte) 0).put(body);
        return out.flip();
    }
}
