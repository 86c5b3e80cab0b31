package dev.millrace.jms.message;

import dev.millrace.protocol.jms.BodyCodec;
import dev.millrace.protocol.jms.BodyType;
import jakarta.jms.JMSException;
import jakarta.jms.TextMessage;

/**
 * A message whose body is a String, stored in the record as UTF-8. A null text is no body; an empty text is a body.
 * Not thread-safe.
 */
public class MillraceTextMessage extends MillraceMessage implements TextMessage {

    private String text;

    @Override
    public void setText(String text) throws JMSException {
        checkBodyWritable();
        this.text = text;
    }

    @Override
    public String getText() {
        return text;
    }

    @Override
    public void clearBody() throws JMSException {
        super.clearBody();
        text = null;
    }

    @Override
    public BodyType bodyType() {
        return BodyType.TEXT;
    }

    @Override
    byte[] encodeBody() {
        return BodyCodec.encodeText(text);
    }

    @Override
    void decodeBody(byte[] body) throws JMSException {
        text = BodyCodec.decodeText(body);
        super.decodeBody(body);
    }

    @Override
    protected boolean hasBody() {
        return text != null;
    }

    @Override
    protected Object bodyValue() {
        return text;
    }

    @Override
    String kind() {
        return "TextMessage";
    }
}
