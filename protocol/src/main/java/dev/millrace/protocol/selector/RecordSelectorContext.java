package dev.millrace.protocol.selector;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

import dev.millrace.protocol.jms.JmsHeaders;
import dev.millrace.protocol.jms.JmsMessageData;
import dev.millrace.protocol.jms.JmsRecord;
import dev.millrace.protocol.jms.JmsRecordCodec;
import dev.millrace.protocol.jms.JmsRecordFormatException;
import dev.millrace.protocol.jms.TypedValueCodec;

/**
 * A {@link SelectorContext} that reads a Kafka record laid out by {@link JmsRecordCodec} straight from its headers,
 * lazily: only the headers a selector asks for are looked up, and only their type tag and payload are read.
 *
 * <pre>
 * identifier         source                                       absent
 * -----------------  -------------------------------------------  ------------------------------
 * JMSDeliveryMode    jms.delivery.mode (1 NON_PERSISTENT,         'PERSISTENT'
 *                    2 PERSISTENT), as a String
 * JMSPriority        jms.priority                                 4
 * JMSMessageID       jms.message.id                               NULL
 * JMSTimestamp       the record timestamp given to reset          (always a value)
 * JMSCorrelationID   jms.correlation.id; NULL when the id was     NULL
 *                    set as bytes (jms.correlation.id.bytes)
 * JMSType            jms.type                                     NULL
 * JMSXGroupID        the record key, UTF-8                        NULL
 * JMSXDeliveryCount  the delivery count given to reset            NULL when given as 0
 * anything else      jms.prop.NAME, TypedValueCodec header form   NULL
 * </pre>
 *
 * <p>No allocation per message on the paths selectors use most: type checks, exact and approximate numbers and
 * booleans are read as primitives, and {@link #stringEquals} compares the literal's UTF-8 with the header bytes
 * without decoding. {@link #stringValue} (LIKE, long IN lists) and {@link #get} decode and box. Each header is
 * looked up once per message for up to {@value #MEMO_SIZE} identifiers. Whether the Kafka {@link Header}s
 * themselves allocate when their key or value is read is up to the record they come from.
 *
 * <p>A malformed {@code jms.} header that the selector reads throws {@link JmsRecordFormatException}, as
 * {@link JmsRecordCodec#decode} would: the record cannot become a JMS message, and the caller decides what to do with
 * it. Headers the selector does not read are not checked. A repeated header reads as its last occurrence.
 *
 * <p>Headers may also be given still encoded, as a v2 record batch holds them ({@link #reset(ByteBuffer, int, int,
 * byte[], long, int)}): keys are then compared as bytes and only the values read are copied, into reused arrays.
 *
 * <p>Not thread-safe: use one instance per thread, {@linkplain #reset(Headers, byte[], long, int) reset} for each
 * record.
 */
public final class RecordSelectorContext implements SelectorContext {

    static final int MEMO_SIZE = 8;
    private static final int MAX_CACHED_KEYS = 1024;
    private static final String PERSISTENT = "PERSISTENT";
    private static final String NON_PERSISTENT = "NON_PERSISTENT";
    /** Marks a memo entry whose header is absent. */
    private static final byte[] ABSENT = new byte[0];
    /** The value of a header present with a null value, read as empty (as {@link JmsRecordCodec#decode} does). */
    private static final byte[] EMPTY = new byte[0];

    private Headers headers;
    private Header[] headerArray;
    private List<Header> headerList;
    /** Encoded headers (v2 record layout): the buffer, the first header's position, how many; null when not. */
    private ByteBuffer encoded;
    /** The encoded buffer's backing array and its offset, when it has one (read directly: no bounds check per byte). */
    private byte[] encodedArray;
    private int encodedArrayOffset;
    private int encodedPosition;
    private int encodedCount;
    private byte[] key;
    private long timestampMs;
    private int deliveryCount;

    private final String[] memoIds = new String[MEMO_SIZE];
    private final byte[][] memoValues = new byte[MEMO_SIZE][];
    /** Per memo slot, the array the last encoded value read into it was copied to (reused for the same length). */
    private final byte[][] scratch = new byte[MEMO_SIZE][];
    /** The same for header keys read past the memo's size. */
    private final Map<String, byte[]> unmemoizedScratch = new HashMap<>();
    private int memoCount;
    /** Where the last {@link #readVarint} ended. */
    private int varintEnd;
    /** Identifier to {@code jms.prop.<identifier>}, so lookups do not concatenate per message. */
    private final Map<String, String> propertyKeys = new HashMap<>();
    /** Header key to its UTF-8, for encoded headers. */
    private final Map<String, byte[]> headerKeyBytes = new HashMap<>();
    /**
     * The last identifiers looked up in encoded headers, by identity (the parser interns them), with their header key
     * and its UTF-8: a selector names few identifiers, so most lookups skip both maps above.
     */
    private final String[] recentIds = new String[MEMO_SIZE];
    private final String[] recentKeys = new String[MEMO_SIZE];
    private final byte[][] recentKeyBytes = new byte[MEMO_SIZE][];
    private int recentNext;

    /**
     * Points this context at one record, as a Kafka consumer sees it.
     *
     * @param timestampMs   the record timestamp, which is JMSTimestamp (see {@link JmsRecordCodec})
     * @param deliveryCount JMSXDeliveryCount of this delivery (1 for the first), or 0 when unknown (NULL)
     * @return this
     */
    public RecordSelectorContext reset(Headers headers, byte[] key, long timestampMs, int deliveryCount) {
        clear(key, timestampMs, deliveryCount);
        this.headers = headers;
        return this;
    }

    /** As {@link #reset(Headers, byte[], long, int)}, for headers as an array (Kafka's {@code Record.headers()}). */
    public RecordSelectorContext reset(Header[] headers, byte[] key, long timestampMs, int deliveryCount) {
        clear(key, timestampMs, deliveryCount);
        this.headerArray = headers;
        return this;
    }

    /**
     * As {@link #reset(Headers, byte[], long, int)}, for headers still encoded as a v2 record holds them (KIP-98):
     * {@code count} headers from absolute position {@code position} of {@code buffer}, each
     * <pre>
     *   keyLength    varint (zigzag)
     *   key          keyLength bytes, UTF-8
     *   valueLength  varint (zigzag), -1 for a null value
     *   value        valueLength bytes
     * </pre>
     * Keys are compared as bytes and only the values a selector asks for are copied, so a record that is never
     * decoded costs no allocation. The buffer's position and limit are not used or changed; it must not change until
     * the next reset. A header that runs past the buffer's limit throws {@link JmsRecordFormatException}.
     */
    public RecordSelectorContext reset(ByteBuffer buffer, int position, int count, byte[] key, long timestampMs,
                                       int deliveryCount) {
        clear(key, timestampMs, deliveryCount);
        this.encoded = buffer;
        if (buffer.hasArray()) {
            this.encodedArray = buffer.array();
            this.encodedArrayOffset = buffer.arrayOffset();
        }
        this.encodedPosition = position;
        this.encodedCount = count;
        return this;
    }

    /** As {@link #reset(Headers, byte[], long, int)}, for a record of the JMS mapping; no timestamp means 0. */
    public RecordSelectorContext reset(JmsRecord record, int deliveryCount) {
        Long ts = record.timestamp();
        clear(record.key(), ts == null || ts < 0 ? 0 : ts, deliveryCount);
        this.headerList = record.headers();
        return this;
    }

    private void clear(byte[] key, long timestampMs, int deliveryCount) {
        this.headers = null;
        this.headerArray = null;
        this.headerList = null;
        this.encoded = null;
        this.encodedArray = null;
        this.key = key;
        this.timestampMs = timestampMs;
        this.deliveryCount = deliveryCount;
        memoCount = 0; // entries past memoCount are never read, so they need no clearing
    }

    @Override
    public ValueType typeOf(String identifier) {
        switch (identifier) {
            case "JMSDeliveryMode":
                return ValueType.STRING;
            case "JMSPriority":
            case "JMSTimestamp":
                return ValueType.EXACT;
            case "JMSMessageID":
            case "JMSCorrelationID":
            case "JMSType":
                return header(identifier) == null ? ValueType.NULL : ValueType.STRING;
            case "JMSXGroupID":
                return key == null ? ValueType.NULL : ValueType.STRING;
            case "JMSXDeliveryCount":
                return deliveryCount > 0 ? ValueType.EXACT : ValueType.NULL;
            default:
                if (Parser.NON_SELECTABLE_HEADERS.contains(identifier)) {
                    return ValueType.NULL;
                }
                byte[] value = header(identifier);
                return value == null ? ValueType.NULL : typeOfTag(value[0]);
        }
    }

    private static ValueType typeOfTag(byte tag) {
        switch (tag) {
            case TypedValueCodec.NULL:
                return ValueType.NULL;
            case TypedValueCodec.BOOLEAN:
                return ValueType.BOOLEAN;
            case TypedValueCodec.FLOAT:
            case TypedValueCodec.DOUBLE:
                return ValueType.APPROXIMATE;
            case TypedValueCodec.STRING:
                return ValueType.STRING;
            default:
                return ValueType.EXACT;
        }
    }

    @Override
    public long longValue(String identifier) {
        switch (identifier) {
            case "JMSPriority":
                return priority();
            case "JMSTimestamp":
                return timestampMs;
            case "JMSXDeliveryCount":
                return deliveryCount;
            default:
                return TypedValueCodec.exactPropertyValue(header(identifier));
        }
    }

    @Override
    public double doubleValue(String identifier) {
        return TypedValueCodec.approximatePropertyValue(header(identifier));
    }

    @Override
    public boolean booleanValue(String identifier) {
        return TypedValueCodec.booleanPropertyValue(header(identifier));
    }

    @Override
    public String stringValue(String identifier) {
        switch (identifier) {
            case "JMSDeliveryMode":
                return deliveryMode();
            case "JMSMessageID":
                return JmsRecordCodec.decodeUtf8Header(JmsHeaders.MESSAGE_ID, header(identifier));
            case "JMSCorrelationID":
                return JmsRecordCodec.decodeUtf8Header(JmsHeaders.CORRELATION_ID, header(identifier));
            case "JMSType":
                return JmsRecordCodec.decodeUtf8Header(JmsHeaders.TYPE, header(identifier));
            case "JMSXGroupID":
                return new String(key, StandardCharsets.UTF_8); // lenient, as JmsRecordCodec reads keys
            default:
                return (String) TypedValueCodec.decodeProperty(propertyKey(identifier), header(identifier));
        }
    }

    @Override
    public boolean stringEquals(String identifier, String literal, byte[] literalUtf8) {
        byte[] bytes;
        int from;
        switch (identifier) {
            case "JMSDeliveryMode":
                return literal.equals(deliveryMode());
            case "JMSXGroupID":
                if (literal.indexOf('\uFFFD') >= 0) { // may stand for an invalid sequence in the key
                    return literal.equals(stringValue(identifier));
                }
                bytes = key;
                from = 0;
                break;
            case "JMSMessageID":
            case "JMSCorrelationID":
            case "JMSType":
                bytes = header(identifier);
                from = 0;
                break;
            default:
                bytes = header(identifier);
                from = 1;
                break;
        }
        if (literalUtf8 == null) {
            return literal.equals(stringValue(identifier));
        }
        // equal bytes are valid UTF-8 (the literal's) and so equal strings; unequal bytes are unequal strings or
        // invalid UTF-8, which is not reported here (only a decode would find it)
        return Arrays.equals(bytes, from, bytes.length, literalUtf8, 0, literalUtf8.length);
    }

    /** Boxed values, for callers that want plain objects; the selector itself uses the typed accessors. */
    @Override
    public Object get(String identifier) {
        switch (typeOf(identifier)) {
            case BOOLEAN:
                return booleanValue(identifier);
            case EXACT: {
                if (identifier.equals("JMSPriority") || identifier.equals("JMSXDeliveryCount")) {
                    return (int) longValue(identifier);
                }
                if (identifier.equals("JMSTimestamp")) {
                    return longValue(identifier);
                }
                return TypedValueCodec.decodeProperty(propertyKey(identifier), header(identifier));
            }
            case APPROXIMATE:
                return TypedValueCodec.decodeProperty(propertyKey(identifier), header(identifier));
            case STRING:
                return stringValue(identifier);
            default:
                return null;
        }
    }

    private String deliveryMode() {
        byte[] value = header("JMSDeliveryMode");
        if (value == null) {
            return PERSISTENT;
        }
        if (value.length == 1 && value[0] == JmsMessageData.NON_PERSISTENT) {
            return NON_PERSISTENT;
        }
        if (value.length == 1 && value[0] == JmsMessageData.PERSISTENT) {
            return PERSISTENT;
        }
        throw new JmsRecordFormatException(JmsHeaders.DELIVERY_MODE, 0,
                "expected one byte, 0x01 or 0x02, found " + Arrays.toString(value));
    }

    private int priority() {
        byte[] value = header("JMSPriority");
        if (value == null) {
            return JmsMessageData.DEFAULT_PRIORITY;
        }
        if (value.length != 1 || value[0] < 0 || value[0] > 9) {
            throw new JmsRecordFormatException(JmsHeaders.PRIORITY, 0,
                    "expected one byte 0..9, found " + Arrays.toString(value));
        }
        return value[0];
    }

    /**
     * The header bytes behind {@code identifier} (a property's checked by {@link TypedValueCodec#propertyTag}), or
     * null when absent; memoized per message by identifier identity (the parser interns identifiers, so the selector's
     * names and the constants here are the same objects).
     */
    private byte[] header(String identifier) {
        for (int i = 0; i < memoCount; i++) {
            if (memoIds[i] == identifier) {
                byte[] value = memoValues[i];
                return value == ABSENT ? null : value;
            }
        }
        String headerKey;
        byte[] value;
        if (encoded != null) {
            int recent = recent(identifier);
            headerKey = recentKeys[recent];
            value = findEncoded(headerKey, recentKeyBytes[recent], memoCount);
        } else {
            headerKey = headerKey(identifier);
            value = find(headerKey);
        }
        if (value != null && headerKey.startsWith(JmsHeaders.PROPERTY_PREFIX)) {
            TypedValueCodec.propertyTag(headerKey, value);
        }
        if (memoCount < MEMO_SIZE) {
            memoIds[memoCount] = identifier;
            memoValues[memoCount++] = value == null ? ABSENT : value;
        }
        return value;
    }

    /** The slot of {@link #recentIds} holding {@code identifier}, filled (replacing the oldest) if it was not there. */
    private int recent(String identifier) {
        for (int i = 0; i < MEMO_SIZE; i++) {
            if (recentIds[i] == identifier) {
                return i;
            }
        }
        int slot = recentNext;
        recentNext = (recentNext + 1) % MEMO_SIZE;
        String headerKey = headerKey(identifier);
        recentIds[slot] = identifier;
        recentKeys[slot] = headerKey;
        recentKeyBytes[slot] = keyBytes(headerKey);
        return slot;
    }

    private String headerKey(String identifier) {
        switch (identifier) {
            case "JMSDeliveryMode":
                return JmsHeaders.DELIVERY_MODE;
            case "JMSPriority":
                return JmsHeaders.PRIORITY;
            case "JMSMessageID":
                return JmsHeaders.MESSAGE_ID;
            case "JMSCorrelationID":
                return JmsHeaders.CORRELATION_ID;
            case "JMSType":
                return JmsHeaders.TYPE;
            default:
                return propertyKey(identifier);
        }
    }

    /**
     * The last encoded header named {@code headerKey}, its value copied out (see the encoded reset) into memo
     * {@code slot}'s scratch array (past the memo: the header key's) when that has the value's length, so that a
     * selector reading same-sized values message after message allocates nothing.
     */
    private byte[] findEncoded(String headerKey, byte[] wanted, int slot) {
        int pos = encodedPosition;
        int limit = encoded.limit();
        int foundAt = -1;
        int foundLength = 0;
        for (int i = 0; i < encodedCount; i++) {
            int keyLength = readVarint(pos, limit);
            pos = varintEnd;
            if (keyLength < 0 || pos + keyLength > limit) {
                throw malformedHeader(headerKey, i);
            }
            boolean match = keyLength == wanted.length && bytesEqual(pos, wanted);
            pos += keyLength;
            int valueLength = readVarint(pos, limit);
            pos = varintEnd;
            if (valueLength < -1 || pos + Math.max(0, valueLength) > limit) {
                throw malformedHeader(headerKey, i);
            }
            if (match) {
                foundAt = pos;
                foundLength = valueLength;
            }
            pos += Math.max(0, valueLength);
        }
        if (foundAt < 0) {
            return null;
        }
        if (foundLength <= 0) {
            return EMPTY; // a null value reads as empty, as elsewhere
        }
        byte[] value = slot < MEMO_SIZE ? scratch[slot] : unmemoizedScratch.get(headerKey);
        if (value == null || value.length != foundLength) {
            value = new byte[foundLength];
            if (slot < MEMO_SIZE) {
                scratch[slot] = value;
            } else {
                if (unmemoizedScratch.size() >= MAX_CACHED_KEYS) {
                    unmemoizedScratch.clear();
                }
                unmemoizedScratch.put(headerKey, value);
            }
        }
        encoded.get(foundAt, value);
        return value;
    }

    private boolean bytesEqual(int pos, byte[] wanted) {
        if (encodedArray != null) {
            int from = encodedArrayOffset + pos;
            return Arrays.equals(encodedArray, from, from + wanted.length, wanted, 0, wanted.length);
        }
        for (int j = 0; j < wanted.length; j++) {
            if (encoded.get(pos + j) != wanted[j]) {
                return false;
            }
        }
        return true;
    }

    /** A zigzag varint at absolute {@code pos} (Kafka's record encoding); sets {@link #varintEnd}. */
    private int readVarint(int pos, int limit) {
        int raw = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            if (pos >= limit) {
                throw new JmsRecordFormatException("headers", pos, "varint runs past the record");
            }
            byte b = encodedArray != null ? encodedArray[encodedArrayOffset + pos++] : encoded.get(pos++);
            raw |= (b & 0x7f) << shift;
            if (b >= 0) {
                varintEnd = pos;
                return (raw >>> 1) ^ -(raw & 1);
            }
        }
        throw new JmsRecordFormatException("headers", pos, "varint longer than 5 bytes");
    }

    private JmsRecordFormatException malformedHeader(String headerKey, int index) {
        return new JmsRecordFormatException("headers", index, "header " + index + " runs past the record (looking for "
                + headerKey + ")");
    }

    private byte[] keyBytes(String headerKey) {
        byte[] bytes = headerKeyBytes.get(headerKey);
        if (bytes == null) {
            if (headerKeyBytes.size() >= MAX_CACHED_KEYS) {
                headerKeyBytes.clear();
            }
            bytes = headerKey.getBytes(StandardCharsets.UTF_8);
            headerKeyBytes.put(headerKey, bytes);
        }
        return bytes;
    }

    private String propertyKey(String identifier) {
        String headerKey = propertyKeys.get(identifier);
        if (headerKey == null) {
            if (propertyKeys.size() >= MAX_CACHED_KEYS) {
                propertyKeys.clear();
            }
            headerKey = JmsHeaders.propertyKey(identifier);
            propertyKeys.put(identifier, headerKey);
        }
        return headerKey;
    }

    private byte[] find(String headerKey) {
        Header found = null;
        if (headers != null) {
            found = headers.lastHeader(headerKey);
        } else if (headerArray != null) {
            for (int i = headerArray.length - 1; i >= 0 && found == null; i--) {
                if (headerKey.equals(headerArray[i].key())) {
                    found = headerArray[i];
                }
            }
        } else if (headerList != null) {
            for (int i = headerList.size() - 1; i >= 0 && found == null; i--) {
                if (headerKey.equals(headerList.get(i).key())) {
                    found = headerList.get(i);
                }
            }
        }
        if (found == null) {
            return null;
        }
        return found.value() == null ? EMPTY : found.value();
    }
}
