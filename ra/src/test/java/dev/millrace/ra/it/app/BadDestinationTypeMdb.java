package dev.millrace.ra.it.app;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/** An activation the resource adapter must refuse: an unknown destinationType. */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Bogus"),
        @ActivationConfigProperty(propertyName = "destination", propertyValue = "it.bad")})
public class BadDestinationTypeMdb implements MessageListener {

    @Override
    public void onMessage(Message message) {
    }
}
