package dev.millrace.jms;

import java.util.ArrayList;
import java.util.List;

import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import dev.millrace.jms.wire.XaRequests;
import dev.millrace.protocol.ext.ExtensionFormatException;
import dev.millrace.protocol.ext.XaCodes;
import dev.millrace.protocol.ext.XaComplete;
import dev.millrace.protocol.ext.XaXid;
import jakarta.jms.JMSException;

/**
 * The XAResource of one {@link MillraceXASession}: associates the session with XA branches ({@link XaBranch} has the
 * branch states and which frames go when) and completes branches by Xid.
 *
 * <ul>
 *   <li>{@code start}/{@code end}: TMNOFLAGS starts a new branch (XAER_DUPID if this cluster's resource manager
 *       knows the Xid), TMJOIN joins a branch another XAResource of the same cluster started (XAER_NOTA if none),
 *       TMRESUME resumes a branch this resource suspended; end with TMSUCCESS, TMFAIL (the branch becomes
 *       rollback-only) or TMSUSPEND. A session works on one branch at a time (XAER_PROTO otherwise). Between
 *       branches the session is not transacted: sends are sent at once, received messages acknowledged.</li>
 *   <li>{@code prepare}: XA_RDONLY for a branch that did nothing on the broker, else XaPrepare.</li>
 *   <li>{@code commit}/{@code rollback}: a branch not yet prepared is committed (one phase only, else XAER_PROTO)
 *       or aborted with its own producer; a prepared one, or a Xid this JVM does not know (a transaction manager's
 *       recovery), with XaComplete to the coordinator of its transactional id, found in this JVM's branches or in
 *       a recover scan (XAER_NOTA when no broker lists it). The broker's {@code xa_code} is thrown as is.</li>
 *   <li>{@code forget}: XaComplete FORGET (a heuristically completed branch).</li>
 *   <li>{@code recover}: TMSTARTRSCAN asks every broker ({@link XaRequests#recover}) and returns every prepared or
 *       heuristically completed branch at once; TMNOFLAGS then returns nothing more and TMENDRSCAN ends the scan.
 *       TMNOFLAGS or TMENDRSCAN without a scan is XAER_PROTO; other flags XAER_INVAL.</li>
 *   <li>{@code isSameRM}: true for an XAResource of the same cluster (same cluster id).</li>
 *   <li>{@code setTransactionTimeout}: seconds, for the branches this resource starts afterwards (the broker
 *       transaction's timeout: it aborts a branch not prepared in time, and prepare then throws XA_RBROLLBACK);
 *       0 restores the factory's {@code transactionTimeoutMs}.</li>
 *   <li>A broker that cannot be reached within the failover window: XAER_RMFAIL.</li>
 *   <li>After the session's connection is closed, commit, rollback and forget of a prepared branch, and recover,
 *       still work (on a short-lived connection of the same settings).</li>
 * </ul>
 *
 * <p>Thread-safe (a transaction manager may complete branches from other threads than the session's).
 */
final class MillraceXAResource implements XAResource {

    private final MillraceXASession session;
    private final MillraceXAConnection connection;
    private volatile int timeoutSeconds;
    private boolean scanning;

    MillraceXAResource(MillraceXASession session, MillraceXAConnection connection) {
        this.session = session;
        this.connection = connection;
    }

    /** An XAException with {@code code} and a message saying why. */
    static XAException xa(int code, String message) {
        XAException e = new XAException(XaCodes.name(code) + ": " + message);
        e.errorCode = code;
        return e;
    }

    static XAException xa(int code, String message, Throwable cause) {
        XAException e = xa(code, message);
        e.initCause(cause);
        return e;
    }

    @Override
    public void start(Xid xid, int flags) throws XAException {
        XaXid x = toXaXid(xid);
        XaResourceManager rm = manager();
        synchronized (this) {
            XaBranch current = session.branch();
            if (current != null) {
                throw xa(XAException.XAER_PROTO, "the session already works on branch " + current.xid()
                        + "; end it before starting " + x);
            }
            XaBranch branch;
            switch (flags) {
                case TMNOFLAGS -> {
                    branch = new XaBranch(x, rm, connection, timeoutMs());
                    if (!rm.add(branch)) {
                        throw xa(XAException.XAER_DUPID, "branch " + x + " already exists; join it with TMJOIN");
                    }
                }
                case TMJOIN, TMRESUME -> {
                    branch = rm.branch(x);
                    if (branch == null) {
                        throw xa(XAException.XAER_NOTA, "no branch " + x + " to " + (flags == TMJOIN ? "join"
                                : "resume"));
                    }
                }
                default -> throw xa(XAException.XAER_INVAL, "start flags " + flags + " are not TMNOFLAGS, TMJOIN"
                        + " or TMRESUME");
            }
            branch.associate(this, flags);
            session.associate(branch);
        }
    }

    @Override
    public void end(Xid xid, int flags) throws XAException {
        XaXid x = toXaXid(xid);
        if (flags != TMSUCCESS && flags != TMFAIL && flags != TMSUSPEND) {
            throw xa(XAException.XAER_INVAL, "end flags " + flags + " are not TMSUCCESS, TMFAIL or TMSUSPEND");
        }
        XaBranch branch = manager().branch(x);
        if (branch == null) {
            throw xa(XAException.XAER_NOTA, "no branch " + x + " to end");
        }
        synchronized (this) {
            boolean active = session.branch() == branch;
            branch.dissociate(this, flags, active ? session.takeConsumed() : java.util.Map.of());
            if (active) {
                session.associate(null);
            }
        }
    }

    @Override
    public int prepare(Xid xid) throws XAException {
        XaXid x = toXaXid(xid);
        XaBranch branch = manager().branch(x);
        if (branch == null) {
            throw xa(manager().listed(x) != null ? XAException.XAER_PROTO : XAException.XAER_NOTA,
                    "prepare of " + x + ", which this resource manager does not run (prepared already, or unknown)");
        }
        return branch.prepare(requests());
    }

    @Override
    public void commit(Xid xid, boolean onePhase) throws XAException {
        XaXid x = toXaXid(xid);
        XaBranch branch = manager().branch(x);
        if (branch != null && branch.phase() == XaBranch.Phase.OPEN) {
            if (!onePhase) {
                throw xa(XAException.XAER_PROTO, "two-phase commit of branch " + x + ", which was not prepared");
            }
            branch.commitOnePhase();
            return;
        }
        if (onePhase) {
            throw xa(branch != null ? XAException.XAER_PROTO : XAException.XAER_NOTA, "one-phase commit of "
                    + x + ", which is " + (branch != null ? "prepared already" : "unknown here"));
        }
        if (branch != null && branch.commitPrepared()) {
            manager().forgetListed(x);
            return;
        }
        complete(x, branch, XaComplete.Action.COMMIT);
    }

    @Override
    public void rollback(Xid xid) throws XAException {
        XaXid x = toXaXid(xid);
        XaBranch branch = manager().branch(x);
        if (branch != null && branch.phase() == XaBranch.Phase.OPEN) {
            if (branch.isAssociatedWith(this) || session.branch() == branch) {
                throw xa(XAException.XAER_PROTO, "rollback of branch " + x + " while this session works on it:"
                        + " end it first");
            }
            branch.rollback();
            return;
        }
        try {
            complete(x, branch, XaComplete.Action.ROLLBACK);
        } catch (XAException e) {
            // a prepare whose answer was lost and that the broker never received: rolled back all the same
            boolean neverPrepared = branch != null && branch.phase() == XaBranch.Phase.PREPARE_UNKNOWN
                    && e.errorCode == XAException.XAER_NOTA;
            if (!neverPrepared) {
                throw e;
            }
        }
    }

    @Override
    public void forget(Xid xid) throws XAException {
        XaXid x = toXaXid(xid);
        XaBranch branch = manager().branch(x);
        if (branch != null && branch.phase() == XaBranch.Phase.OPEN) {
            throw xa(XAException.XAER_PROTO, "forget of branch " + x + ", which is not completed");
        }
        complete(x, branch, XaComplete.Action.FORGET);
    }

    /** XaComplete for {@code x} ({@code branch}: this JVM's, or null for one found in a recover scan). */
    private void complete(XaXid x, XaBranch branch, XaComplete.Action action) throws XAException {
        XaResourceManager rm = manager();
        String transactionalId = branch != null ? branch.transactionalId() : null;
        org.apache.kafka.common.Node coordinator = null;
        if (transactionalId == null) {
            XaRequests.Listed l = rm.listed(x);
            if (l == null) {
                rm.listed(scan());
                l = rm.listed(x);
            }
            if (l == null) {
                throw xa(XAException.XAER_NOTA, "no broker of " + rm + " lists a branch " + x);
            }
            transactionalId = l.branch().transactionalId();
            coordinator = l.coordinator();
        }
        XaComplete.Request request = new XaComplete.Request(transactionalId, x, action, false);
        org.apache.kafka.common.Node at = coordinator;
        XaComplete.Response r = onRequests(action.name().toLowerCase() + " of branch " + x,
                requests -> requests.complete(request, at));
        if (r.xaCode() != XaCodes.XA_RETRY) {
            // decided by the broker (or unknown to it): this JVM no longer needs the branch
            forgetHere(rm, x, branch, action, r.xaCode());
        }
        if (r.xaCode() != XaCodes.XA_OK) {
            throw xa(r.xaCode(), action.name().toLowerCase() + " of branch " + x + ": " + r.errorMessage());
        }
    }

    private static void forgetHere(XaResourceManager rm, XaXid x, XaBranch branch, XaComplete.Action action,
                                   int xaCode) {
        if (branch != null && branch.phase() != XaBranch.Phase.OPEN) {
            Boolean committed = switch (xaCode) {
                case XaCodes.XA_OK -> action == XaComplete.Action.FORGET ? null : action == XaComplete.Action.COMMIT;
                case XaCodes.XA_HEURCOM -> true;
                case XaCodes.XA_HEURRB, XaCodes.XA_RBROLLBACK, XaCodes.XA_RBTIMEOUT -> false;
                default -> null;
            };
            boolean heuristic = xaCode == XaCodes.XA_HEURCOM || xaCode == XaCodes.XA_HEURRB;
            branch.completedOnBroker(committed, !heuristic);
        }
        if (xaCode != XaCodes.XA_HEURCOM && xaCode != XaCodes.XA_HEURRB) {
            rm.forgetListed(x);
        }
    }

    @Override
    public Xid[] recover(int flags) throws XAException {
        if ((flags & ~(TMSTARTRSCAN | TMENDRSCAN)) != 0) {
            throw xa(XAException.XAER_INVAL, "recover flags " + flags + " are not TMSTARTRSCAN, TMENDRSCAN, both, or"
                    + " TMNOFLAGS");
        }
        synchronized (this) {
            if ((flags & TMSTARTRSCAN) == 0 && !scanning) {
                throw xa(XAException.XAER_PROTO, "recover without TMSTARTRSCAN when no scan is open");
            }
            List<Xid> out = new ArrayList<>();
            if ((flags & TMSTARTRSCAN) != 0) {
                List<XaRequests.Listed> scan = scan();
                manager().listed(scan);
                for (XaRequests.Listed l : scan) {
                    if (l.branch().state().isRecoverable()) {
                        out.add(new XidValue(l.branch().xid()));
                    }
                }
            }
            // every branch comes with TMSTARTRSCAN; a TMNOFLAGS call of the same scan has nothing more
            scanning = (flags & TMENDRSCAN) == 0;
            return out.toArray(new Xid[0]);
        }
    }

    private List<XaRequests.Listed> scan() throws XAException {
        return onRequests("recover", XaRequests::recover);
    }

    /** One XA extension call ({@link #onRequests}). */
    @FunctionalInterface
    private interface XaCall<T> {
        T call(XaRequests requests) throws JMSException;
    }

    /**
     * Runs {@code call} on this resource's connection or, once that is closed, on a short-lived connection with the
     * same settings (without its client id): a transaction manager may complete or recover branches through an
     * XAResource whose connection its application, or a container's pool, has closed since prepare (e.g. while
     * undeploying). XAER_RMFAIL when the cluster cannot be reached.
     */
    private <T> T onRequests(String what, XaCall<T> call) throws XAException {
        try {
            if (!connection.isClosed()) {
                try {
                    return call.call(connection.xaRequests());
                } catch (jakarta.jms.IllegalStateException closedMeanwhile) {
                    if (!connection.isClosed()) {
                        throw closedMeanwhile;
                    }
                }
            }
            try (MillraceXAConnection shortLived = MillraceConnection.open(connection.settings(),
                    MillraceXAConnection::new, false)) {
                return call.call(shortLived.xaRequests());
            }
        } catch (JMSException e) {
            throw xa(XAException.XAER_RMFAIL, what + ": " + e.getMessage(), e);
        }
    }

    @Override
    public boolean isSameRM(XAResource other) throws XAException {
        return other instanceof MillraceXAResource o && o.manager() == manager();
    }

    @Override
    public int getTransactionTimeout() {
        int seconds = timeoutSeconds;
        return seconds > 0 ? seconds : Math.max(1, connection.settings().transactionTimeoutMs() / 1000);
    }

    @Override
    public boolean setTransactionTimeout(int seconds) throws XAException {
        if (seconds < 0) {
            throw xa(XAException.XAER_INVAL, "transaction timeout " + seconds + " s is negative");
        }
        timeoutSeconds = seconds;
        return true;
    }

    private int timeoutMs() {
        int seconds = timeoutSeconds;
        return seconds > 0 ? (int) Math.min(Integer.MAX_VALUE, seconds * 1000L)
                : connection.settings().transactionTimeoutMs();
    }

    private XaResourceManager manager() throws XAException {
        try {
            return connection.resourceManager();
        } catch (JMSException e) {
            throw xa(XAException.XAER_RMFAIL, "the cluster at " + connection.settings().brokers() + " cannot be"
                    + " reached: " + e.getMessage(), e);
        }
    }

    private XaRequests requests() throws XAException {
        try {
            return connection.xaRequests();
        } catch (JMSException e) {
            throw xa(XAException.XAER_RMFAIL, e.getMessage(), e);
        }
    }

    /** The Xid as the XA extensions carry it; XAER_INVAL for a null or malformed one. */
    static XaXid toXaXid(Xid xid) throws XAException {
        if (xid == null) {
            throw xa(XAException.XAER_INVAL, "the Xid is null");
        }
        try {
            return new XaXid(xid.getFormatId(), xid.getGlobalTransactionId(), xid.getBranchQualifier());
        } catch (ExtensionFormatException e) {
            throw xa(XAException.XAER_INVAL, e.getMessage(), e);
        }
    }

    /** A Xid a recover scan returns. */
    record XidValue(XaXid xid) implements Xid {

        @Override
        public int getFormatId() {
            return xid.formatId();
        }

        @Override
        public byte[] getGlobalTransactionId() {
            return xid.gtrid();
        }

        @Override
        public byte[] getBranchQualifier() {
            return xid.bqual();
        }
    }

    @Override
    public String toString() {
        return "MillraceXAResource[" + connection.settings().brokers() + "]";
    }
}
