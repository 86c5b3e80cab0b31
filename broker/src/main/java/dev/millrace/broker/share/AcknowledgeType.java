package dev.millrace.broker.share;

import java.util.Optional;

/**
 * The acknowledgement types of ShareFetch and ShareAcknowledge, by their wire ids. {@code GAP}
 * acknowledges an offset the client found no record for (compacted away, a control record).
 */
public enum AcknowledgeType {
    GAP(0), ACCEPT(1), RELEASE(2), REJECT(3), RENEW(4);

    private final byte id;

    AcknowledgeType(int id) {
        this.id = (byte) id;
    }

    public byte id() {
        return id;
    }

    /** The type with wire id {@code id}, or empty for an unknown id. */
    public static Optional<AcknowledgeType> forId(byte id) {
        return Optional.ofNullable(byId(id));
    }

    /** The type with wire id {@code id}, or null for an unknown id (the per-offset path: nothing allocated). */
    static AcknowledgeType byId(byte id) {
        return id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
    }

    private static final AcknowledgeType[] BY_ID = byIdTable();

    private static AcknowledgeType[] byIdTable() {
        int maxId = 0;
        for (AcknowledgeType type : values()) {
            maxId = Math.max(maxId, type.id);
        }
        AcknowledgeType[] table = new AcknowledgeType[maxId + 1];
        for (AcknowledgeType type : values()) {
            table[type.id] = type;
        }
        return table;
    }
}
