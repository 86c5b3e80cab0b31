package dev.millrace.samples.plainjms;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSException;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/**
 * Publish and subscribe: two subscribers (each with a MessageListener on a session of its own) get every message
 * published to a topic after they subscribed. A non-durable subscriber starts at the end of the topic, so the
 * subscribers are created before anything is published. Not thread-safe; one call uses one connection.
 */
final class TopicPublishSubscribe {

    private TopicPublishSubscribe() {
    }

    /**
     * Subscribes each of {@code subscribers} to {@code topic}, publishes {@code bodies}, and waits at most
     * {@code timeoutMs} for every subscriber to have them all. Returns, per subscriber, the texts it received.
     */
    static Map<String, List<String>> publishToSubscribers(ConnectionFactory factory, Topic topic,
            List<String> subscribers, List<String> bodies, long timeoutMs) throws JMSException, InterruptedException {
        Map<String, List<String>> received = new LinkedHashMap<>();
        CountDownLatch all = new CountDownLatch(subscribers.size() * bodies.size());
        try (Connection connection = factory.createConnection()) {
            for (String name : subscribers) {
                List<String> texts = Collections.synchronizedList(new ArrayList<>());
                received.put(name, texts);
                Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
                session.createConsumer(topic).setMessageListener(message -> {
                    try {
                        texts.add(((TextMessage) message).getText());
                    } catch (JMSException e) {
                        texts.add("unreadable: " + e);
                    }
                    all.countDown();
                });
            }
            connection.start();
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer publisher = session.createProducer(topic);
            for (String body : bodies) {
                publisher.send(session.createTextMessage(body));
            }
            all.await(timeoutMs, TimeUnit.MILLISECONDS);
        }
        Map<String, List<String>> copy = new LinkedHashMap<>();
        received.forEach((name, texts) -> copy.put(name, List.copyOf(texts)));
        return copy;
    }
}
