package dev.millrace.jms.wire;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

import java.io.DataOutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;

import dev.millrace.protocol.net.ClientSecurity;

import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ExtensionHeader;

/**
 * Sends Millrace extension requests ({@code dev.millrace.protocol.ext}) to brokers: one blocking socket per broker,
 * opened on first use, one request at a time per broker. kafka-clients cannot send API keys it does not know, so
 * the provider speaks these few requests itself; everything else goes through kafka-clients.
 *
 * <p>A failed call (I/O error, timeout, the broker closing the connection because it does not serve the API)
 * closes that broker's socket; the next call opens a new one.
 *
 * <p>Thread-safe: calls to one broker are serialized.
 */
public final class ExtensionClient implements AutoCloseable {

    private static final int MAX_RESPONSE_BYTES = 100 * 1024 * 1024;

    private final String clientId;
    private final int timeoutMs;
    private final ClientSecurity security;
    private final Map<String, Socket> sockets = new HashMap<>();
    private int nextCorrelationId;
    private boolean closed;

    public ExtensionClient(String clientId, int timeoutMs) {
        this(clientId, timeoutMs, ClientSecurity.PLAINTEXT);
    }

    /** A client whose sockets use {@code security}: TLS and SASL authentication before the first request. */
    public ExtensionClient(String clientId, int timeoutMs, ClientSecurity security) {
        this.clientId = clientId;
        this.timeoutMs = timeoutMs;
        this.security = security;
    }

    /**
     * Sends {@code body} as {@code api} version {@code version} to {@code host:port} and returns the response body.
     *
     * @throws IOException when the broker cannot be reached, does not answer within the timeout, or closes the
     *                     connection (which it does for an API or version it does not serve)
     */
    public synchronized ByteBuffer call(String host, int port, ExtensionApi api, short version, Struct body)
            throws IOException {
        if (closed) {
            throw new IOException("the extension client is closed");
        }
        String address = host + ":" + port;
        Socket socket = sockets.get(address);
        try {
            if (socket == null) {
                socket = open(host, port);
                sockets.put(address, socket);
            }
            int correlationId = nextCorrelationId++;
            ByteBuffer frame = new ExtensionHeader(api.key(), version, correlationId, clientId).frame(body);
            OutputStream out = socket.getOutputStream();
            out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int size = in.readInt();
            if (size < 4 || size > MAX_RESPONSE_BYTES) {
                throw new IOException(api.displayName() + " response from " + address + " has an invalid size "
                        + size);
            }
            byte[] bytes = new byte[size];
            in.readFully(bytes);
            ByteBuffer response = ByteBuffer.wrap(bytes);
            int echoed = response.getInt();
            if (echoed != correlationId) {
                throw new IOException(api.displayName() + " response from " + address + " has correlation id "
                        + echoed + ", expected " + correlationId);
            }
            return response;
        } catch (IOException e) {
            drop(address);
            if (e instanceof java.io.EOFException) {
                throw new IOException("broker " + address + " closed the connection on " + api.displayName()
                        + " (a broker that does not serve this Millrace extension does that)", e);
            }
            throw e;
        }
    }

    /** A connected socket to {@code host:port}, TLS-wrapped and SASL-authenticated as {@link #security} says. */
    private Socket open(String host, int port) throws IOException {
        Socket socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(timeoutMs);
            socket.connect(new InetSocketAddress(host, port), timeoutMs);
            if (security.usesTls()) {
                socket = security.wrap(socket, host, port);
            }
            if (security.usesSasl()) {
                authenticate(socket, host, port);
            }
            return socket;
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    private void authenticate(Socket socket, String host, int port) throws IOException {
        String address = host + ":" + port;
        try {
            security.authenticator(host).authenticate((builder, version) -> {
                try {
                    return CompletableFuture.completedFuture(kafkaCall(socket, builder.build(version)));
                } catch (IOException e) {
                    throw new CompletionException(e);
                }
            }).join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new IOException("cannot authenticate to broker " + address + ": " + cause.getMessage(), cause);
        }
    }

    /** One Kafka request and its response on a blocking socket (the SASL exchange). */
    private AbstractResponse kafkaCall(Socket socket, AbstractRequest request) throws IOException {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), clientId, nextCorrelationId++);
        ByteBuffer frame = request.serializeWithHeader(header);
        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.writeInt(frame.remaining());
        out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
        out.flush();
        DataInputStream in = new DataInputStream(socket.getInputStream());
        int size = in.readInt();
        if (size < 4 || size > MAX_RESPONSE_BYTES) {
            throw new IOException(request.apiKey() + " response has an invalid size " + size);
        }
        byte[] bytes = new byte[size];
        in.readFully(bytes);
        return AbstractResponse.parseResponse(ByteBuffer.wrap(bytes), header);
    }

    private void drop(String address) {
        Socket s = sockets.remove(address);
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (String address : sockets.keySet().toArray(new String[0])) {
            drop(address);
        }
    }
}
