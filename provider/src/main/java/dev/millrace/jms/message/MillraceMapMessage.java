package dev.millrace.jms.message;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.millrace.protocol.jms.BodyCodec;
import dev.millrace.protocol.jms.BodyType;
import dev.millrace.protocol.jms.TypedValueCodec;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.MessageFormatException;

/**
 * A message whose body is a set of named typed values, read with the conversions of {@link ValueConversions}.
 * Names must not be null or empty ({@link IllegalArgumentException}); any other string is a valid name. A map with no
 * entries is "no body" for {@link #getBody}. byte[] values are copied in and out.
 *
 * <p>Not thread-safe.
 */
public class MillraceMapMessage extends MillraceMessage implements MapMessage {

    private Map<String, Object> entries = new LinkedHashMap<>();

    private static void checkName(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a map entry name must not be null or empty");
        }
    }

    private void put(String name, Object value) throws JMSException {
        checkName(name);
        checkBodyWritable();
        entries.put(name, value);
    }

    @Override
    public boolean getBoolean(String name) throws JMSException {
        return ValueConversions.toBoolean(entries.get(name));
    }

    @Override
    public byte getByte(String name) throws JMSException {
        return ValueConversions.toByte(entries.get(name));
    }

    @Override
    public short getShort(String name) throws JMSException {
        return ValueConversions.toShort(entries.get(name));
    }

    @Override
    public char getChar(String name) throws JMSException {
        return ValueConversions.toChar(entries.get(name));
    }

    @Override
    public int getInt(String name) throws JMSException {
        return ValueConversions.toInt(entries.get(name));
    }

    @Override
    public long getLong(String name) throws JMSException {
        return ValueConversions.toLong(entries.get(name));
    }

    @Override
    public float getFloat(String name) throws JMSException {
        return ValueConversions.toFloat(entries.get(name));
    }

    @Override
    public double getDouble(String name) throws JMSException {
        return ValueConversions.toDouble(entries.get(name));
    }

    @Override
    public String getString(String name) throws JMSException {
        return ValueConversions.toStringValue(entries.get(name));
    }

    @Override
    public byte[] getBytes(String name) throws JMSException {
        return ValueConversions.toBytes(entries.get(name));
    }

    @Override
    public Object getObject(String name) {
        return ValueConversions.toObject(entries.get(name));
    }

    @Override
    @SuppressWarnings("rawtypes")
    public Enumeration getMapNames() {
        return Collections.enumeration(new ArrayList<>(entries.keySet()));
    }

    @Override
    public void setBoolean(String name, boolean value) throws JMSException {
        put(name, value);
    }

    @Override
    public void setByte(String name, byte value) throws JMSException {
        put(name, value);
    }

    @Override
    public void setShort(String name, short value) throws JMSException {
        put(name, value);
    }

    @Override
    public void setChar(String name, char value) throws JMSException {
        put(name, value);
    }

    @Override
    public void setInt(String name, int value) throws JMSException {
        put(name, value);
    }

    @Override
    public void setLong(String name, long value) throws JMSException {
        put(name, value);
    }

    @Override
    public void setFloat(String name, float value) throws JMSException {
        put(name, value);
    }

    @Override
    public void setDouble(String name, double value) throws JMSException {
        put(name, value);
    }

    @Override
    public void setString(String name, String value) throws JMSException {
        put(name, value);
    }

    @Override
    public void setBytes(String name, byte[] value) throws JMSException {
        put(name, value == null ? null : value.clone());
    }

    @Override
    public void setBytes(String name, byte[] value, int offset, int length) throws JMSException {
        byte[] copy = new byte[length];
        System.arraycopy(value, offset, copy, 0, length);
        put(name, copy);
    }

    @Override
    public void setObject(String name, Object value) throws JMSException {
        if (!TypedValueCodec.isBodyValue(value)) {
            checkName(name);
            throw new MessageFormatException("map entry " + name + ": " + value.getClass().getName()
                    + " is not a map value type (a boxed primitive, String or byte[])");
        }
        put(name, ValueConversions.toObject(value));
    }

    @Override
    public boolean itemExists(String name) {
        return entries.containsKey(name);
    }

    @Override
    public void clearBody() throws JMSException {
        super.clearBody();
        entries = new LinkedHashMap<>();
    }

    @Override
    public BodyType bodyType() {
        return BodyType.MAP;
    }

    @Override
    byte[] encodeBody() {
        return BodyCodec.encodeMap(entries);
    }

    @Override
    void decodeBody(byte[] body) throws JMSException {
        entries = BodyCodec.decodeMap(body);
        super.decodeBody(body);
    }

    @Override
    protected boolean hasBody() {
        return !entries.isEmpty();
    }

    /** A new modifiable map with copies of byte[] values. */
    @Override
    protected Object bodyValue() {
        Map<String, Object> copy = new HashMap<>();
        entries.forEach((k, v) -> copy.put(k, ValueConversions.toObject(v)));
        return copy;
    }

    @Override
    String kind() {
        return "MapMessage";
    }
}
