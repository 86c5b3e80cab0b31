package dev.millrace.broker.controller;

/**
 * Where a registered broker stands with the controller. A registration starts {@link #FENCED}; the
 * broker becomes {@link #UNFENCED} once a heartbeat shows it has caught up with the metadata, goes
 * back to {@link #FENCED} when its session expires (or it asks to be fenced), and enters
 * {@link #CONTROLLED_SHUTDOWN} when it asks to shut down. Only an unfenced broker gets new replicas
 * or leaderships, or may join an ISR.
 *
 * <p>The ids are the wire form in {@link MetadataRecord.BrokerStateRecord} and never change.
 */
public enum BrokerState {
    FENCED(0),
    UNFENCED(1),
    CONTROLLED_SHUTDOWN(2);

    private final byte id;

    BrokerState(int id) {
        this.id = (byte) id;
    }

    byte id() {
        return id;
    }

    /** @throws MetadataCodecException for an id no state has */
    static BrokerState forId(byte id) {
        for (BrokerState state : values()) {
            if (state.id == id) {
                return state;
            }
        }
        throw new MetadataCodecException("unknown broker state id " + id);
    }
}
