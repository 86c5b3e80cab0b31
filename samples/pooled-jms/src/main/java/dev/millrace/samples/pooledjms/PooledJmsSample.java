package dev.millrace.samples.pooledjms;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.messaginghub.pooled.jms.JmsPoolConnectionFactory;

import dev.millrace.jms.MillraceConnectionFactory;
import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * Pooled connections: code that opens a connection, a session and a producer for every single send (as code written
 * for a container's pooled factory does) is slow against a plain Millrace factory, whose connections each hold Kafka
 * clients. Wrapped in pooled-jms's {@link JmsPoolConnectionFactory}, {@code createConnection()} hands out one of at
 * most {@code maxConnections} real connections and {@code close()} returns it (and its sessions) to the pool.
 *
 * <p>The program sends {@code threads x sendsPerThread} messages, each through its own borrowed connection, from
 * several threads at once, then receives them all through the pool and prints how many real connections the pool
 * opened. The pool is thread-safe; {@link #run} uses a fixed pool of sender threads and receives on the calling
 * thread.
 *
 * <pre>
 *   java -jar samples/pooled-jms/target/millrace-sample-pooled-jms.jar [brokers]   (default: localhost:9092)
 * </pre>
 */
public final class PooledJmsSample {

    static final int MAX_CONNECTIONS = 2;
    static final long TIMEOUT_MS = 10_000;

    private PooledJmsSample() {
    }

    public static void main(String[] args) throws Exception {
        String brokers = args.length > 0 ? args[0] : "localhost:9092";
        JmsPoolConnectionFactory pool = pool(new MillraceConnectionFactory(brokers));
        try {
            Result result = run(pool, "pooled-orders", 4, 25, System.out);
            System.out.println("pooled-jms sample: " + (result.ok() ? "OK" : "FAILED"));
            System.exit(result.ok() ? 0 : 1);
        } finally {
            pool.stop();
        }
    }

    /** A pool of at most {@link #MAX_CONNECTIONS} connections to {@code millrace}. */
    static JmsPoolConnectionFactory pool(MillraceConnectionFactory millrace) {
        JmsPoolConnectionFactory pool = new JmsPoolConnectionFactory();
        pool.setConnectionFactory(millrace);
        pool.setMaxConnections(MAX_CONNECTIONS);
        pool.setMaxSessionsPerConnection(100);
        return pool;
    }

    /** What a run sent and received, and how many real connections the pool held at the end. */
    record Result(int sent, Set<String> received, int pooledConnections) {
        boolean ok() {
            return received.size() == sent;
        }
    }

    static Result run(JmsPoolConnectionFactory pool, String queueName, int threads, int sendsPerThread,
            PrintStream out) throws Exception {
        long start = System.nanoTime();
        ExecutorService senders = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Void>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(senders.submit(() -> {
                    for (int i = 0; i < sendsPerThread; i++) {
                        sendOne(pool, queueName, "order-" + thread + "-" + i);
                    }
                    return null;
                }));
            }
            for (Future<Void> f : done) {
                f.get();
            }
        } finally {
            senders.shutdown();
        }
        int sent = threads * sendsPerThread;
        out.printf("sent %d messages, each on a connection of its own from the pool, in %d ms%n", sent,
                (System.nanoTime() - start) / 1_000_000);
        Set<String> received = receiveAll(pool, queueName, sent);
        out.printf("received %d distinct messages; the pool opened %d real connection(s) (at most %d)%n",
                received.size(), pool.getNumConnections(), MAX_CONNECTIONS);
        return new Result(sent, received, pool.getNumConnections());
    }

    /** Borrows a connection, sends one message and gives the connection back: the pattern the pool makes cheap. */
    static void sendOne(ConnectionFactory factory, String queueName, String body) throws JMSException {
        try (Connection connection = factory.createConnection()) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue queue = session.createQueue(queueName);
            MessageProducer producer = session.createProducer(queue);
            producer.send(session.createTextMessage(body));
        }
    }

    private static Set<String> receiveAll(ConnectionFactory factory, String queueName, int count)
            throws JMSException {
        Set<String> received = new HashSet<>();
        try (Connection connection = factory.createConnection()) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = session.createConsumer(session.createQueue(queueName));
            connection.start();
            while (received.size() < count) {
                Message message = consumer.receive(TIMEOUT_MS);
                if (message == null) {
                    break;
                }
                received.add(((TextMessage) message).getText());
            }
            consumer.close();
        }
        return received;
    }
}
