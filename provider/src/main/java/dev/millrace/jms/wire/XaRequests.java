package dev.millrace.jms.wire;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.protocol.Errors;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.JmsExceptions;
import dev.millrace.jms.wire.failover.RetryWindow;
import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.XaComplete;
import dev.millrace.protocol.ext.XaPrepare;
import dev.millrace.protocol.ext.XaRecover;
import jakarta.jms.JMSException;

/**
 * The XA extension requests of the provider ({@link XaPrepare}, {@link XaComplete}, {@link XaRecover}), over the
 * connection's {@link ExtensionClient}:
 * <ul>
 *   <li>XaPrepare and XaComplete go to the transaction coordinator of the branch's transactional id, found with the
 *       admin client (DescribeTransactions names the coordinator; the admin client finds it with FindCoordinator,
 *       key type TRANSACTION), or to the broker that listed the branch in a recover scan.</li>
 *   <li>XaRecover goes to every broker; the answers are merged (one branch per Xid) once together they cover every
 *       {@code __transaction_state} partition, else every broker is asked again.</li>
 *   <li>An unreachable broker or an answer "not the coordinator here, now" ({@code XAER_RMFAIL} with
 *       NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE) is retried, with the coordinator
 *       looked up again, within the failover window ({@link RetryWindow}); after it the call throws a
 *       {@link JMSException}, which the XA layer answers with {@code XAER_RMFAIL}.</li>
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class XaRequests {

    /** A branch listed by a recover scan, and the broker that listed it (its coordinator). */
    public record Listed(XaRecover.Branch branch, Node coordinator) {
    }

    private final Admin admin;
    private final ExtensionClient client;
    private final ConnectionSettings settings;
    private final RetryWindow window;
    /**
     * The coordinator that last answered a prepare for a transactional id: a connection's ids serve branch after
     * branch, and looking the coordinator up (DescribeTransactions and the metadata) would cost three round trips a
     * prepare. Dropped when a call to it fails or is answered with a retriable error.
     */
    private final Map<String, Node> coordinators = new java.util.concurrent.ConcurrentHashMap<>();

    public XaRequests(Admin admin, ExtensionClient client, ConnectionSettings settings) {
        this.admin = admin;
        this.client = client;
        this.settings = settings;
        this.window = RetryWindow.of(settings.failoverTimeoutMs());
    }

    /** XaPrepare to the coordinator of the request's transactional id; the answer as the broker gave it. */
    public XaPrepare.Response prepare(XaPrepare.Request request) throws JMSException {
        return window.call("prepare XA branch " + request.xid(), () -> {
            String id = request.transactionalId();
            Node to = coordinators.get(id);
            if (to == null) {
                to = coordinator(id);
            }
            XaPrepare.Response r;
            try {
                r = XaPrepare.Response.read(call(to, ExtensionApi.XA_PREPARE, XaPrepare.VERSION, request.toStruct()));
                maybeRetry(r.errorCode(), "XaPrepare");
            } catch (IOException | JMSException e) {
                coordinators.remove(id); // moved, or gone: the retry looks it up
                throw e;
            }
            coordinators.put(id, to);
            return r;
        });
    }

    /**
     * XaComplete to {@code coordinator}, or, when it is null or no longer the coordinator, to the coordinator of
     * the request's transactional id (the one that answered its last prepare here, else looked up).
     */
    public XaComplete.Response complete(XaComplete.Request request, Node coordinator) throws JMSException {
        Node[] target = {coordinator};
        return window.call(request.action().name().toLowerCase() + " XA branch " + request.xid(), () -> {
            String id = request.transactionalId();
            Node to = target[0] != null ? target[0] : coordinators.get(id);
            if (to == null) {
                to = coordinator(id);
            }
            target[0] = null; // a retry looks the coordinator up
            XaComplete.Response r;
            try {
                r = XaComplete.Response.read(call(to, ExtensionApi.XA_COMPLETE, XaComplete.VERSION,
                        request.toStruct()));
                maybeRetry(r.errorCode(), "XaComplete");
            } catch (IOException | JMSException e) {
                coordinators.remove(id);
                throw e;
            }
            return r;
        });
    }

    /**
     * Every branch the cluster's coordinators know, one per Xid, once the answers cover every partition of
     * {@code __transaction_state}.
     *
     * @throws JMSException when no set of answers covered them all within the failover window (naming the
     *                      partitions left uncovered), or the brokers cannot be reached
     */
    public List<Listed> recover() throws JMSException {
        return window.call("recover XA branches", () -> {
            Map<dev.millrace.protocol.ext.XaXid, Listed> merged = new LinkedHashMap<>();
            Set<Integer> covered = new TreeSet<>();
            int partitionCount = -1;
            List<String> failures = new ArrayList<>();
            for (Node broker : brokers()) {
                XaRecover.Response r;
                try {
                    r = XaRecover.Response.read(call(broker, ExtensionApi.XA_RECOVER, XaRecover.VERSION,
                            new XaRecover.Request(null).toStruct()));
                } catch (IOException e) {
                    failures.add(broker.host() + ":" + broker.port() + ": " + e.getMessage());
                    continue;
                }
                if (r.errorCode() != Errors.NONE.code()) {
                    failures.add(broker.host() + ":" + broker.port() + ": " + Errors.forCode(r.errorCode()).name()
                            + " " + r.errorMessage());
                    continue;
                }
                partitionCount = Math.max(partitionCount, r.partitionCount());
                covered.addAll(r.partitions());
                for (XaRecover.Branch b : r.branches()) {
                    merged.putIfAbsent(b.xid(), new Listed(b, broker));
                }
            }
            if (partitionCount > 0 && covered.size() >= partitionCount) {
                return List.copyOf(merged.values());
            }
            Set<Integer> missing = new TreeSet<>();
            for (int p = 0; p < partitionCount; p++) {
                if (!covered.contains(p)) {
                    missing.add(p);
                }
            }
            // retried within the window: a partition is moving or loading
            throw new IOException("no broker answered for partitions " + (partitionCount < 0 ? "(all)" : missing)
                    + " of __transaction_state" + (failures.isEmpty() ? "" : "; " + failures));
        });
    }

    /** The cluster id (the identity of the resource manager), from the metadata. */
    public String clusterId() throws JMSException {
        return window.call("find the cluster id", () -> admin.describeCluster().clusterId()
                .get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS));
    }

    private static void maybeRetry(short errorCode, String what) throws JMSException {
        Errors error = Errors.forCode(errorCode);
        if (RetryWindow.isRetriableError(error)) {
            throw new JMSException(what + ": " + error.name(), error.name());
        }
    }

    private java.nio.ByteBuffer call(Node to, ExtensionApi api, short version,
                                org.apache.kafka.common.protocol.types.Struct body) throws IOException {
        if (to == null || to.isEmpty()) {
            throw new IOException("no broker to send " + api.displayName() + " to");
        }
        return client.call(to.host(), to.port(), api, version, body);
    }

    private Node coordinator(String transactionalId) throws JMSException, InterruptedException {
        try {
            TransactionDescription d = admin.describeTransactions(List.of(transactionalId))
                    .description(transactionalId).get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
            for (Node n : brokers()) {
                if (n.id() == d.coordinatorId()) {
                    return n;
                }
            }
            throw new JMSException("the coordinator of " + transactionalId + " (broker " + d.coordinatorId()
                    + ") is not in the cluster's metadata", Errors.COORDINATOR_NOT_AVAILABLE.name());
        } catch (ExecutionException e) {
            throw JmsExceptions.fromClient("find the transaction coordinator of " + transactionalId, e.getCause());
        } catch (TimeoutException e) {
            throw JmsExceptions.fromClient("find the transaction coordinator of " + transactionalId, e);
        }
    }

    private Collection<Node> brokers() throws JMSException, InterruptedException {
        try {
            return admin.describeCluster().nodes().get(settings.blockingTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw JmsExceptions.fromClient("find the brokers", e.getCause());
        } catch (TimeoutException e) {
            throw JmsExceptions.fromClient("find the brokers", e);
        }
    }
}
