package dev.millrace.ra.it.app;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/** An activation the resource adapter must refuse: a message selector with a syntax error. */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "destination", propertyValue = "it.bad"),
        @ActivationConfigProperty(propertyName = "messageSelector", propertyValue = "kind = 'a' AND")})
public class BadSelectorMdb implements MessageListener {

    @Override
    public void onMessage(Message message) {
    }
}
