package dev.millrace.ra.outbound;

import java.nio.ByteBuffer;
import java.util.UUID;

import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import jakarta.resource.ResourceException;
import jakarta.resource.spi.LocalTransaction;
import jakarta.resource.spi.LocalTransactionException;

/**
 * A container-driven local transaction of a {@link MillraceManagedConnection}, run as a one-phase XA branch of the
 * connection's own XAResource under a Xid made here: {@code begin} starts the branch (the session's sends and
 * receives join it), {@code commit} ends it and commits it in one phase, {@code rollback} ends it as failed and
 * rolls it back. One mechanism thus serves both transaction kinds the container may choose.
 *
 * <p>Not thread-safe: the container drives one transaction at a time.
 */
final class ManagedLocalTransaction implements LocalTransaction {

    /** Format id of the Xids of local transactions ("MRLT"); a transaction manager never recovers them. */
    static final int FORMAT_ID = 0x4d524c54;

    private final XAResource resource;
    private Xid current;

    ManagedLocalTransaction(XAResource resource) {
        this.resource = resource;
    }

    @Override
    public void begin() throws ResourceException {
        if (current != null) {
            throw new LocalTransactionException("a local transaction is already active: " + current);
        }
        Xid xid = newXid();
        try {
            resource.start(xid, XAResource.TMNOFLAGS);
        } catch (XAException e) {
            throw failure("begin", e);
        }
        current = xid;
    }

    @Override
    public void commit() throws ResourceException {
        Xid xid = take("commit");
        try {
            resource.end(xid, XAResource.TMSUCCESS);
            resource.commit(xid, true);
        } catch (XAException e) {
            throw failure("commit", e);
        }
    }

    @Override
    public void rollback() throws ResourceException {
        Xid xid = take("rollback");
        try {
            resource.end(xid, XAResource.TMFAIL);
        } catch (XAException e) {
            // ended already or failed: the rollback below still aborts the broker transaction
        }
        try {
            resource.rollback(xid);
        } catch (XAException e) {
            throw failure("rollback", e);
        }
    }

    private Xid take(String action) throws LocalTransactionException {
        Xid xid = current;
        if (xid == null) {
            throw new LocalTransactionException(action + " without an active local transaction");
        }
        current = null;
        return xid;
    }

    private static LocalTransactionException failure(String action, XAException e) {
        LocalTransactionException l = new LocalTransactionException("local transaction " + action + " failed: "
                + e.getMessage(), e);
        l.setErrorCode(String.valueOf(e.errorCode));
        return l;
    }

    private static Xid newXid() {
        UUID id = UUID.randomUUID();
        byte[] gtrid = ByteBuffer.allocate(16).putLong(id.getMostSignificantBits())
                .putLong(id.getLeastSignificantBits()).array();
        return new LocalXid(gtrid);
    }

    /** A Xid of a local transaction: a random global id, an empty branch qualifier. */
    private record LocalXid(byte[] gtrid) implements Xid {

        @Override
        public int getFormatId() {
            return FORMAT_ID;
        }

        @Override
        public byte[] getGlobalTransactionId() {
            return gtrid.clone();
        }

        @Override
        public byte[] getBranchQualifier() {
            return new byte[] {1};
        }

        @Override
        public String toString() {
            return "LocalXid[" + UUID.nameUUIDFromBytes(gtrid) + "]";
        }
    }
}
