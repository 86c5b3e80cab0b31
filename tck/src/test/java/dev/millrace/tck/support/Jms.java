package dev.millrace.tck.support;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Hashtable;
import java.util.UUID;

import javax.naming.InitialContext;
import javax.naming.NamingException;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Queue;
import jakarta.jms.QueueConnection;
import jakarta.jms.QueueConnectionFactory;
import jakarta.jms.Session;
import jakarta.jms.Topic;
import jakarta.jms.TopicConnection;
import jakarta.jms.TopicConnectionFactory;

/**
 * One test's access to the broker: the JNDI context (connection factory {@code ConnectionFactory}, destinations by
 * {@code dynamicQueues/<name>} and {@code dynamicTopics/<name>}), names unique to the test, and the connections and
 * contexts it opened, all closed (newest first, failures ignored: the test may have closed them) when the test ends.
 * Confined to the test's thread, except {@link #close()}, which JUnit calls after the test.
 */
public final class Jms implements AutoCloseable {

    /** How long a test waits for a message that must arrive. */
    public static final long RECEIVE_MS = 10_000;
    /** How long a test waits to see that a message does NOT arrive. */
    public static final long NOTHING_MS = 300;

    private final InitialContext jndi;
    private final String testName;
    private final Deque<AutoCloseable> resources = new ArrayDeque<>();

    Jms(Hashtable<String, String> environment, String testName) {
        try {
            this.jndi = new InitialContext(environment);
        } catch (NamingException e) {
            throw new IllegalStateException("JNDI environment refused: " + e, e);
        }
        this.testName = testName;
    }

    /** The object JNDI binds to {@code name}. */
    public Object lookup(String name) {
        try {
            return jndi.lookup(name);
        } catch (NamingException e) {
            throw new IllegalStateException("JNDI lookup of " + name + " failed: " + e, e);
        }
    }

    public ConnectionFactory factory() {
        return (ConnectionFactory) lookup("ConnectionFactory");
    }

    /** A name no other test uses, e.g. {@code tck.sub.0f3a9c41e2b7} for {@code kind} "sub". */
    public String name(String kind) {
        return "tck." + kind + "." + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    /** A queue of its own for this test. */
    public Queue queue() {
        return (Queue) lookup("dynamicQueues/" + name("q"));
    }

    /** A topic of its own for this test. */
    public Topic topic() {
        return (Topic) lookup("dynamicTopics/" + name("t"));
    }

    /** A new, stopped connection. */
    public Connection connection() throws JMSException {
        return track(factory().createConnection());
    }

    /** A new, started connection. */
    public Connection startedConnection() throws JMSException {
        Connection connection = connection();
        connection.start();
        return connection;
    }

    /** A non-transacted AUTO_ACKNOWLEDGE session on a new started connection. */
    public Session session() throws JMSException {
        return startedConnection().createSession(false, Session.AUTO_ACKNOWLEDGE);
    }

    public QueueConnection queueConnection() throws JMSException {
        return track(((QueueConnectionFactory) factory()).createQueueConnection());
    }

    public TopicConnection topicConnection() throws JMSException {
        return track(((TopicConnectionFactory) factory()).createTopicConnection());
    }

    /** A new context in AUTO_ACKNOWLEDGE mode (started on its first consumer). */
    public JMSContext context() {
        return track(factory().createContext());
    }

    public JMSContext context(int sessionMode) {
        return track(factory().createContext(sessionMode));
    }

    /** Closes {@code resource} when the test ends. */
    public <T extends AutoCloseable> T track(T resource) {
        resources.push(resource);
        return resource;
    }

    @Override
    public void close() {
        while (!resources.isEmpty()) {
            try {
                resources.pop().close();
            } catch (Exception e) {
                // already closed or broken by the test itself
            }
        }
        try {
            jndi.close();
        } catch (NamingException e) {
            // nothing held
        }
    }

    @Override
    public String toString() {
        return "Jms[" + testName + "]";
    }
}
