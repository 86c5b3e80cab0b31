package dev.millrace.protocol.ext;

import java.util.Arrays;
import java.util.HexFormat;

import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.protocol.types.Type;

/**
 * An XA transaction branch identifier (the X/Open XA {@code XID}, {@code javax.transaction.xa.Xid}): a format id,
 * a global transaction id (gtrid) and a branch qualifier (bqual). Two Xids are equal when all three are.
 *
 * <h2>On the wire</h2>
 * Inside the XA extension bodies ({@link XaPrepare}, {@link XaComplete}, {@link XaRecover}) as three fields:
 * <pre>
 * int32  format_id   any value but -1 (XA's "null Xid")
 * bytes  gtrid       int32 length, then 1..64 bytes
 * bytes  bqual       int32 length, then 0..64 bytes
 * </pre>
 *
 * <h2>As text</h2>
 * {@code <formatId>:<gtrid hex>:<bqual hex>}, e.g. {@code 4660:6f7264657231:01} (lower-case hex, bqual may be
 * empty). This is how the broker logs a Xid and how the {@code millrace xa} command line takes and prints it.
 *
 * <p>Immutable and thread-safe (the arrays are copied in and out).
 */
public final class XaXid {

    /** XA's limit on both gtrid and bqual ({@code MAXGTRIDSIZE}, {@code MAXBQUALSIZE}). */
    public static final int MAX_PART_BYTES = 64;

    static final Field FORMAT_ID = new Field("format_id", Type.INT32);
    static final Field GTRID = new Field("gtrid", Type.BYTES);
    static final Field BQUAL = new Field("bqual", Type.BYTES);

    private final int formatId;
    private final byte[] gtrid;
    private final byte[] bqual;

    /**
     * @throws ExtensionFormatException naming the part that is out of bounds: format id -1, gtrid empty or longer
     *                                  than 64 bytes, bqual longer than 64 bytes, or a null part
     */
    public XaXid(int formatId, byte[] gtrid, byte[] bqual) {
        if (formatId == -1) {
            throw new ExtensionFormatException("Xid format_id -1 is XA's null Xid, not a transaction branch");
        }
        if (gtrid == null || gtrid.length == 0 || gtrid.length > MAX_PART_BYTES) {
            throw new ExtensionFormatException("Xid gtrid must hold 1.." + MAX_PART_BYTES + " bytes, not "
                    + (gtrid == null ? "null" : gtrid.length));
        }
        if (bqual == null || bqual.length > MAX_PART_BYTES) {
            throw new ExtensionFormatException("Xid bqual must hold 0.." + MAX_PART_BYTES + " bytes, not "
                    + (bqual == null ? "null" : bqual.length));
        }
        this.formatId = formatId;
        this.gtrid = gtrid.clone();
        this.bqual = bqual.clone();
    }

    public int formatId() {
        return formatId;
    }

    public byte[] gtrid() {
        return gtrid.clone();
    }

    public byte[] bqual() {
        return bqual.clone();
    }

    /** How many bytes {@link #writeTo} writes. */
    public int sizeInBytes() {
        return 4 + 4 + gtrid.length + 4 + bqual.length;
    }

    /** Writes the three fields into {@code s}, whose schema has them (under their wire names). */
    void set(Struct s) {
        s.set(FORMAT_ID.name, formatId).set(GTRID.name, java.nio.ByteBuffer.wrap(gtrid)).set(BQUAL.name,
                java.nio.ByteBuffer.wrap(bqual));
    }

    /** Reads the three fields from {@code s}; throws {@link ExtensionFormatException} for a Xid out of bounds. */
    static XaXid from(Struct s) {
        return new XaXid(s.getInt(FORMAT_ID.name), bytes(s.getBytes(GTRID.name)), bytes(s.getBytes(BQUAL.name)));
    }

    private static byte[] bytes(java.nio.ByteBuffer buffer) {
        byte[] out = new byte[buffer.remaining()];
        buffer.duplicate().get(out);
        return out;
    }

    /** Writes the Xid as 4-byte format id, 2-byte gtrid length, gtrid, 2-byte bqual length, bqual. */
    public void writeTo(java.nio.ByteBuffer out) {
        out.putInt(formatId).putShort((short) gtrid.length).put(gtrid).putShort((short) bqual.length).put(bqual);
    }

    /** Bytes {@link #writeTo} needs. */
    public int compactSize() {
        return 4 + 2 + gtrid.length + 2 + bqual.length;
    }

    /**
     * Reads what {@link #writeTo} wrote.
     *
     * @throws ExtensionFormatException if the lengths are out of bounds
     * @throws java.nio.BufferUnderflowException if {@code in} ends early
     */
    public static XaXid readFrom(java.nio.ByteBuffer in) {
        int formatId = in.getInt();
        byte[] g = new byte[checkLength(in.getShort(), "gtrid")];
        in.get(g);
        byte[] b = new byte[checkLength(in.getShort(), "bqual")];
        in.get(b);
        return new XaXid(formatId, g, b);
    }

    private static int checkLength(short length, String part) {
        if (length < 0 || length > MAX_PART_BYTES) {
            throw new ExtensionFormatException("Xid " + part + " length " + length + " is not 0.." + MAX_PART_BYTES);
        }
        return length;
    }

    /**
     * Parses the text form {@code <formatId>:<gtrid hex>:<bqual hex>}.
     *
     * @throws ExtensionFormatException naming what is wrong with {@code text}
     */
    public static XaXid parse(String text) {
        String[] parts = text.split(":", -1);
        if (parts.length != 3) {
            throw new ExtensionFormatException("Xid '" + text + "' is not <formatId>:<gtrid hex>:<bqual hex>");
        }
        try {
            return new XaXid(Integer.parseInt(parts[0]), HexFormat.of().parseHex(parts[1]),
                    HexFormat.of().parseHex(parts[2]));
        } catch (IllegalArgumentException e) {
            throw new ExtensionFormatException("Xid '" + text + "' is not <formatId>:<gtrid hex>:<bqual hex>: "
                    + e.getMessage(), e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof XaXid x && x.formatId == formatId && Arrays.equals(x.gtrid, gtrid)
                && Arrays.equals(x.bqual, bqual);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * formatId + Arrays.hashCode(gtrid)) + Arrays.hashCode(bqual);
    }

    /** The text form, see the class comment. */
    @Override
    public String toString() {
        return formatId + ":" + HexFormat.of().formatHex(gtrid) + ":" + HexFormat.of().formatHex(bqual);
    }
}
