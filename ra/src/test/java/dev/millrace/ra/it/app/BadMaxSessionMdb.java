package dev.millrace.ra.it.app;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/** An activation the resource adapter must refuse: a negative maxSession. */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "destination", propertyValue = "it.bad"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "-1")})
public class BadMaxSessionMdb implements MessageListener {

    @Override
    public void onMessage(Message message) {
    }
}
