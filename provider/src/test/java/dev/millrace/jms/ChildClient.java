package dev.millrace.jms;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * A JMS application in a JVM of its own, for tests that kill it with SIGKILL. It uses only the jakarta.jms API and
 * {@link MillraceConnectionFactory}, reports on stdout, one line per event, and then blocks until killed.
 *
 * <pre>
 * temporary BOOTSTRAP              creates a temporary queue and a temporary topic; prints "temporary NAME" each
 * consume BOOTSTRAP QUEUE N ACK    CLIENT_ACKNOWLEDGE: receives N messages, printing "received TEXT" each, and
 *                                  acknowledges (printing "acknowledged") after the ACK-th
 * transform BOOTSTRAP IN OUT N K   transacted: for each message of queue IN sends "out-TEXT" to queue OUT; commits
 *                                  after every K (printing "committed"), N messages in all, then receives and sends
 *                                  one more without committing (transaction timeout 3 s)
 * </pre>
 * All print "ready" last.
 */
public final class ChildClient {

    private ChildClient() {
    }

    public static void main(String[] args) throws Exception {
        MillraceConnectionFactory factory = new MillraceConnectionFactory(args[1]);
        factory.setRequestTimeoutMs(10_000);
        factory.setTransactionTimeoutMs(3_000);
        if (args[0].equals("transform")) {
            factory.setPrefetch(5);
        }
        Connection connection = factory.createConnection();
        if (args[0].equals("transform")) {
            transform(connection, args[2], args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5]));
            System.out.println("ready");
            System.out.flush();
            System.in.read();
            return;
        }
        Session session = connection.createSession(Session.CLIENT_ACKNOWLEDGE);
        if (args[0].equals("temporary")) {
            System.out.println("temporary " + session.createTemporaryQueue().getQueueName());
            System.out.println("temporary " + session.createTemporaryTopic().getTopicName());
        } else {
            consume(connection, session, args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
        }
        System.out.println("ready");
        System.out.flush();
        System.in.read(); // until killed (the parent never writes)
    }

    private static void consume(Connection connection, Session session, String queue, int count, int ackAfter)
            throws JMSException {
        MessageConsumer consumer = session.createConsumer(session.createQueue(queue));
        connection.start();
        for (int i = 1; i <= count; i++) {
            Message m = consumer.receive(20_000);
            System.out.println("received " + ((TextMessage) m).getText());
            if (i == ackAfter) {
                m.acknowledge();
                System.out.println("acknowledged");
            }
        }
    }

    private static void transform(Connection connection, String in, String out, int count, int commitEvery)
            throws JMSException {
        Session session = connection.createSession(Session.SESSION_TRANSACTED);
        MessageConsumer consumer = session.createConsumer(session.createQueue(in));
        jakarta.jms.MessageProducer producer = session.createProducer(session.createQueue(out));
        connection.start();
        for (int i = 1; i <= count + 1; i++) {
            TextMessage m = (TextMessage) consumer.receive(20_000);
            producer.send(session.createTextMessage("out-" + m.getText()));
            if (i % commitEvery == 0 && i <= count) {
                session.commit();
                System.out.println("committed");
            }
        }
        System.out.println("mid-transaction");
    }

    /** The parent's handle on a running child. */
    static final class Handle implements AutoCloseable {
        private final Process process;
        private final BufferedReader out;
        final List<String> lines = new ArrayList<>();

        private Handle(Process process) {
            this.process = process;
            this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        }

        static Handle start(String... args) throws IOException {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> command = new ArrayList<>(List.of(java, "-Xmx128m",
                    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.logFile=System.err",
                    "-cp", System.getProperty("java.class.path"), ChildClient.class.getName()));
            command.addAll(List.of(args));
            return new Handle(new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start());
        }

        /** Reads lines until "ready"; fails if the child exits first. */
        List<String> awaitReady() throws IOException {
            String line;
            while ((line = out.readLine()) != null) {
                if (line.equals("ready")) {
                    return lines;
                }
                lines.add(line);
            }
            throw new IllegalStateException("the child exited before it was ready; it printed " + lines);
        }

        /** SIGKILL: the client gets no chance to close anything. */
        void kill() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }

        @Override
        public void close() throws InterruptedException {
            if (process.isAlive()) {
                kill();
            }
        }
    }
}
