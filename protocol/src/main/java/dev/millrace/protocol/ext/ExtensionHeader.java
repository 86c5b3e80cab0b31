package dev.millrace.protocol.ext;

import java.nio.ByteBuffer;

import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.SchemaException;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.protocol.types.Type;

/**
 * The header of an extension request: Kafka's request header version 1.
 * <pre>
 * int16 api_key | int16 api_version | int32 correlation_id | string client_id (int16 length, -1 = null)
 * </pre>
 *
 * @param apiKey        the API key, in the reserved range
 * @param apiVersion    the body's version
 * @param correlationId echoed in the response
 * @param clientId      the client's id, may be null
 */
public record ExtensionHeader(short apiKey, short apiVersion, int correlationId, String clientId) {

    private static final Schema SCHEMA = new Schema(
            new Field("api_key", Type.INT16),
            new Field("api_version", Type.INT16),
            new Field("correlation_id", Type.INT32),
            new Field("client_id", Type.NULLABLE_STRING));

    /** Reads a header from {@code buffer}, leaving it at the body. */
    public static ExtensionHeader read(ByteBuffer buffer) {
        try {
            Struct s = SCHEMA.read(buffer);
            return new ExtensionHeader(s.getShort("api_key"), s.getShort("api_version"), s.getInt("correlation_id"),
                    s.getString("client_id"));
        } catch (SchemaException | java.nio.BufferUnderflowException e) {
            throw new ExtensionFormatException("malformed extension request header: " + e.getMessage(), e);
        }
    }

    public Struct toStruct() {
        return new Struct(SCHEMA).set("api_key", apiKey).set("api_version", apiVersion)
                .set("correlation_id", correlationId).set("client_id", clientId);
    }

    /**
     * A whole request frame (size prefix included) with this header and {@code body}.
     */
    public ByteBuffer frame(Struct body) {
        Struct header = toStruct();
        int size = header.sizeOf() + body.sizeOf();
        ByteBuffer out = ByteBuffer.allocate(4 + size);
        out.putInt(size);
        header.writeTo(out);
        body.writeTo(out);
        return out.flip();
    }

    /** A whole response frame (size prefix and response header included) for this request. */
    public ByteBuffer responseFrame(Struct body) {
        int size = 4 + body.sizeOf();
        ByteBuffer out = ByteBuffer.allocate(4 + size);
        out.putInt(size);
        out.putInt(correlationId);
        body.writeTo(out);
        return out.flip();
    }
}
