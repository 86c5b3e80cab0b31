package dev.millrace.protocol.selector;

/**
 * SQL three-valued logic over {@code int}s, so evaluation returns primitives (Jakarta Messaging 3.1, section
 * 3.8.1.1, refers to SQL-92 for the truth tables):
 *
 * <pre>
 *  AND | T  F  U        OR | T  F  U        NOT |
 *  ----+---------       ---+---------       ----+--
 *   T  | T  F  U         T | T  T  T         T  | F
 *   F  | F  F  F         F | T  F  U         F  | T
 *   U  | U  F  U         U | T  U  U         U  | U
 * </pre>
 */
final class Truth {

    static final int FALSE = 0;
    static final int TRUE = 1;
    static final int UNKNOWN = 2;

    private Truth() {
    }

    static int of(boolean value) {
        return value ? TRUE : FALSE;
    }

    static int not(int value) {
        return value == UNKNOWN ? UNKNOWN : 1 - value;
    }

    /** AND of two values already computed (the evaluator short-circuits before calling this where it can). */
    static int and(int left, int right) {
        if (left == FALSE || right == FALSE) {
            return FALSE;
        }
        return left == UNKNOWN || right == UNKNOWN ? UNKNOWN : TRUE;
    }

    static int or(int left, int right) {
        if (left == TRUE || right == TRUE) {
            return TRUE;
        }
        return left == UNKNOWN || right == UNKNOWN ? UNKNOWN : FALSE;
    }

    /** {@link Boolean#TRUE}, {@link Boolean#FALSE} or {@code null} for unknown (no allocation). */
    static Boolean toBoolean(int value) {
        return value == UNKNOWN ? null : value == TRUE;
    }
}
