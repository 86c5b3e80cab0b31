package dev.millrace.broker.cli;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.protocol.types.Struct;

import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ExtensionHeader;
import dev.millrace.protocol.ext.XaCodes;
import dev.millrace.protocol.ext.XaComplete;
import dev.millrace.protocol.ext.XaPrepare;
import dev.millrace.protocol.ext.XaRecover;
import dev.millrace.protocol.ext.XaXid;

/**
 * A blocking client of the XA extensions ({@link XaPrepare}, {@link XaComplete}, {@link XaRecover}) for the
 * {@code millrace xa} command line and for tests: finds the brokers through the admin client, asks each for its
 * branches and merges the answers (checking that every {@code __transaction_state} partition was covered), and sends
 * a completion to the broker that listed the branch. One short-lived connection per request.
 *
 * <p>Not thread-safe.
 */
public final class XaClient implements AutoCloseable {

    /** A branch and the broker that listed it (its coordinator). */
    public record Listed(XaRecover.Branch branch, InetSocketAddress coordinator) {
    }

    private final Admin admin;
    private final Duration timeout;
    private int correlationId;

    /** @param timeout for each request, and for the recover list to cover every partition */
    public XaClient(String bootstrap, Duration timeout) {
        this.timeout = timeout;
        this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis(),
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.min(timeout.toMillis(), 30_000)));
    }

    /** The listeners of the cluster's brokers, from the metadata. */
    public List<InetSocketAddress> brokers() throws Exception {
        Collection<Node> nodes = admin.describeCluster().nodes().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        return nodes.stream().map(n -> new InetSocketAddress(n.host(), n.port())).toList();
    }

    /**
     * Every broker's branches (one per Xid), once the answers together cover every partition of
     * {@code __transaction_state}; asks again while some are not covered (leadership moving, a partition loading).
     *
     * @throws IOException naming the partitions still uncovered when the timeout passes
     */
    public List<Listed> recoverAll(String transactionalIdPrefix) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Map<XaXid, Listed> merged = new LinkedHashMap<>();
            Set<Integer> covered = new TreeSet<>();
            int partitionCount = -1;
            List<String> failures = new ArrayList<>();
            for (InetSocketAddress broker : brokers()) {
                XaRecover.Response response;
                try {
                    response = recover(broker, transactionalIdPrefix);
                } catch (IOException e) {
                    failures.add(broker + ": " + e.getMessage());
                    continue;
                }
                if (response.errorCode() != 0) {
                    failures.add(broker + ": error " + response.errorCode() + " " + response.errorMessage());
                    continue;
                }
                partitionCount = Math.max(partitionCount, response.partitionCount());
                covered.addAll(response.partitions());
                for (XaRecover.Branch branch : response.branches()) {
                    merged.putIfAbsent(branch.xid(), new Listed(branch, broker));
                }
            }
            if (partitionCount > 0 && covered.size() >= partitionCount) {
                return List.copyOf(merged.values());
            }
            if (System.nanoTime() - deadline > 0) {
                Set<Integer> missing = new TreeSet<>();
                for (int p = 0; p < partitionCount; p++) {
                    if (!covered.contains(p)) {
                        missing.add(p);
                    }
                }
                throw new IOException("no broker answered for partitions " + (partitionCount < 0 ? "(all)" : missing)
                        + " of __transaction_state within " + timeout + (failures.isEmpty() ? "" : "; " + failures));
            }
            Thread.sleep(200); // the cluster is moving a partition: ask again shortly
        }
    }

    /** One broker's XaRecover answer. */
    public XaRecover.Response recover(InetSocketAddress broker, String transactionalIdPrefix) throws IOException {
        return XaRecover.Response.read(exchange(broker, ExtensionApi.XA_RECOVER, XaRecover.VERSION,
                new XaRecover.Request(transactionalIdPrefix).toStruct()));
    }

    /** XaPrepare to {@code broker} (the coordinator of the request's transactional id). */
    public XaPrepare.Response prepare(InetSocketAddress broker, XaPrepare.Request request) throws IOException {
        return XaPrepare.Response.read(exchange(broker, ExtensionApi.XA_PREPARE, XaPrepare.VERSION,
                request.toStruct()));
    }

    /** XaComplete to {@code broker} (the coordinator of the request's transactional id). */
    public XaComplete.Response complete(InetSocketAddress broker, XaComplete.Request request) throws IOException {
        return XaComplete.Response.read(exchange(broker, ExtensionApi.XA_COMPLETE, XaComplete.VERSION,
                request.toStruct()));
    }

    /**
     * Completes {@code xid} knowing only the Xid: finds its branch in the merged recover list and sends XaComplete
     * to the broker that listed it. A Xid no broker lists is answered XAER_NOTA here.
     */
    public XaComplete.Response complete(XaXid xid, XaComplete.Action action, boolean heuristic) throws Exception {
        Optional<Listed> listed = recoverAll(null).stream().filter(l -> l.branch().xid().equals(xid)).findFirst();
        if (listed.isEmpty()) {
            return new XaComplete.Response((short) 0, "no broker lists an XA branch " + xid, XaCodes.XAER_NOTA);
        }
        return complete(listed.get().coordinator(), new XaComplete.Request(listed.get().branch().transactionalId(),
                xid, action, heuristic));
    }

    /** Sends one request frame to {@code broker} on a new connection and returns the response body. */
    public ByteBuffer exchange(InetSocketAddress broker, ExtensionApi api, short version, Struct body)
            throws IOException {
        int id = ++correlationId;
        ByteBuffer frame = new ExtensionHeader(api.key(), version, id, "millrace-xa").frame(body);
        return exchangeRaw(broker, frame, id);
    }

    /** Sends {@code frame} (size prefix included) and returns the body of the response with {@code correlationId}. */
    public ByteBuffer exchangeRaw(InetSocketAddress broker, ByteBuffer frame, int expectedCorrelationId)
            throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(broker, (int) timeout.toMillis());
            socket.setSoTimeout((int) timeout.toMillis());
            OutputStream out = socket.getOutputStream();
            out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int size = in.readInt();
            if (size < 4 || size > 64 << 20) {
                throw new IOException(broker + " answered a frame of " + size + " bytes");
            }
            byte[] response = new byte[size];
            in.readFully(response);
            ByteBuffer buffer = ByteBuffer.wrap(response);
            int correlation = buffer.getInt();
            if (correlation != expectedCorrelationId) {
                throw new IOException(broker + " answered correlation id " + correlation + ", not "
                        + expectedCorrelationId);
            }
            return buffer.slice();
        }
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
    }
}
