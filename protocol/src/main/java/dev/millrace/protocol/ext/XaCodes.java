package dev.millrace.protocol.ext;

/**
 * The XA return codes the XA extensions answer with ({@code xa_code}), with the values of
 * {@code javax.transaction.xa.XAException} and {@code XAResource} (this module does not depend on the JTA API; a
 * test checks the values are the same). A provider throws {@code new XAException(xaCode)} for a negative code or
 * one of the {@code XA_RB*}/{@code XA_HEUR*} codes, and returns normally for {@link #XA_OK}.
 */
public final class XaCodes {

    /** Done. */
    public static final int XA_OK = 0;
    /** The branch was rolled back (by the broker, an administrator or the transaction manager). */
    public static final int XA_RBROLLBACK = 100;
    /** The branch was rolled back because it exceeded its transaction timeout before it was prepared. */
    public static final int XA_RBTIMEOUT = 106;
    /** Could not be done now; the same call may succeed later (a branch whose markers are being written). */
    public static final int XA_RETRY = 4;
    /** Some of the branch's work was committed and some rolled back (not produced by Millrace). */
    public static final int XA_HEURMIX = 5;
    /** An administrator rolled the branch back by hand before the transaction manager decided. */
    public static final int XA_HEURRB = 6;
    /** An administrator committed the branch by hand before the transaction manager decided. */
    public static final int XA_HEURCOM = 7;
    /** A resource manager error (the request failed in the broker for another reason). */
    public static final int XAER_RMERR = -3;
    /** The Xid is not known (never prepared here, or completed and forgotten). */
    public static final int XAER_NOTA = -4;
    /** Invalid arguments (a malformed Xid or request). */
    public static final int XAER_INVAL = -5;
    /** The call does not fit the branch's state (e.g. rollback of a committed branch, forget of a prepared one). */
    public static final int XAER_PROTO = -6;
    /** The resource manager is unavailable now (no coordinator for the branch here: look it up again, retry). */
    public static final int XAER_RMFAIL = -7;
    /** The Xid already names another branch. */
    public static final int XAER_DUPID = -8;

    private XaCodes() {
    }

    /** The constant's name for {@code code}, for messages and the command line; {@code "xa_code <n>"} if unknown. */
    public static String name(int code) {
        return switch (code) {
            case XA_OK -> "XA_OK";
            case XA_RBROLLBACK -> "XA_RBROLLBACK";
            case XA_RBTIMEOUT -> "XA_RBTIMEOUT";
            case XA_RETRY -> "XA_RETRY";
            case XA_HEURMIX -> "XA_HEURMIX";
            case XA_HEURRB -> "XA_HEURRB";
            case XA_HEURCOM -> "XA_HEURCOM";
            case XAER_RMERR -> "XAER_RMERR";
            case XAER_NOTA -> "XAER_NOTA";
            case XAER_INVAL -> "XAER_INVAL";
            case XAER_PROTO -> "XAER_PROTO";
            case XAER_RMFAIL -> "XAER_RMFAIL";
            case XAER_DUPID -> "XAER_DUPID";
            default -> "xa_code " + code;
        };
    }
}
