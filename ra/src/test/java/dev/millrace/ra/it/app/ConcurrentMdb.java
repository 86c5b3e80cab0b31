package dev.millrace.ra.it.app;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.annotation.Resource;
import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/**
 * With maxSession=4 on {@code it.concurrent}: each onMessage waits (at most 10 s) until it has seen two deliveries
 * in progress at once, then forwards {@code body:true} to {@code it.concurrent.done}; {@code body:false} if it
 * waited in vain (deliveries one at a time).
 */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "destination", propertyValue = "it.concurrent"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "4"),
        @ActivationConfigProperty(propertyName = "prefetch", propertyValue = "1")})
public class ConcurrentMdb implements MessageListener {

    private static final AtomicInteger ACTIVE = new AtomicInteger();
    private static final CountDownLatch TWO_AT_ONCE = new CountDownLatch(1);

    @Resource(name = AppResources.CONNECTION_FACTORY)
    private ConnectionFactory factory;

    @Override
    public void onMessage(Message message) {
        if (ACTIVE.incrementAndGet() >= 2) {
            TWO_AT_ONCE.countDown();
        }
        try (JMSContext context = factory.createContext()) {
            boolean concurrent = TWO_AT_ONCE.await(10, TimeUnit.SECONDS);
            context.createProducer().send(context.createQueue("it.concurrent.done"),
                    message.getBody(String.class) + ":" + concurrent);
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            ACTIVE.decrementAndGet();
        }
    }
}
