package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.IllegalStateException;
import jakarta.jms.IllegalStateRuntimeException;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * What MessageListeners and CompletionListeners may do with their own session, connection and context (JMS 3.1
 * section 7.3, asynchronous send; Session.close, Connection.close, Connection.stop, JMSContext.close and
 * JMSContext.stop javadoc): closing or stopping from a MessageListener fails, closing, committing and rolling back
 * from a CompletionListener fails, and stopping from a CompletionListener works.
 */
@Timeout(60)
class CallbackRulesIntegrationTest {

    @TempDir
    static Path dataDir;
    static TestBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBroker.start(dataDir);
    }

    @AfterAll
    static void stopBroker() throws Exception {
        broker.close();
    }

    /** A call made inside a callback. */
    @FunctionalInterface
    private interface Call {
        void run() throws Exception;
    }

    /** Runs each call, in order, and returns what it threw (null for none) by name. */
    private static Map<String, Throwable> attempt(Map<String, Call> calls) {
        Map<String, Throwable> thrown = new LinkedHashMap<>();
        calls.forEach((name, call) -> {
            try {
                call.run();
                thrown.put(name, null);
            } catch (Exception e) {
                thrown.put(name, e);
            }
        });
        return thrown;
    }

    private static CompletionListener onCompletion(CompletableFuture<Map<String, Throwable>> result,
                                                   Map<String, Call> calls) {
        return new CompletionListener() {
            @Override
            public void onCompletion(Message message) {
                result.complete(attempt(calls));
            }

            @Override
            public void onException(Message message, Exception exception) {
                result.completeExceptionally(exception);
            }
        };
    }

    /**
     * Session.close, Connection.close and Connection.stop javadoc: called from a MessageListener of its own session or
     * connection they throw IllegalStateException (Millrace's choice where the javadoc allows failing), and the
     * session goes on working.
     */
    @Test
    void shouldRefuseClosingOrStoppingFromAMessageListenerOfItsOwnSessionOrConnection() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Session sender = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = sender.createQueue("cb.listener");
            MessageConsumer consumer = s.createConsumer(q);
            CompletableFuture<Map<String, Throwable>> result = new CompletableFuture<>();
            consumer.setMessageListener(m -> {
                Map<String, Call> calls = new LinkedHashMap<>();
                calls.put("Session.close", s::close);
                calls.put("Connection.close", c::close);
                calls.put("Connection.stop", c::stop);
                result.complete(attempt(calls));
            });
            sender.createProducer(q).send(sender.createTextMessage("first"));
            c.start();

            Map<String, Throwable> thrown = result.get(10, TimeUnit.SECONDS);
            assertThat(thrown).containsOnlyKeys("Session.close", "Connection.close", "Connection.stop");
            assertThat(thrown.values()).allSatisfy(e -> assertThat(e).isInstanceOf(IllegalStateException.class));

            CompletableFuture<String> next = new CompletableFuture<>();
            consumer.setMessageListener(m -> next.complete(text(m)));
            sender.createProducer(q).send(sender.createTextMessage("second"));
            assertThat(next.get(10, TimeUnit.SECONDS)).as("session and connection still open").isEqualTo("second");
        }
    }

    /** JMSContext.close and JMSContext.stop javadoc: from its own MessageListener, IllegalStateRuntimeException. */
    @Test
    void shouldRefuseClosingOrStoppingAContextFromItsOwnMessageListener() throws Exception {
        try (JMSContext context = broker.factory().createContext()) {
            Queue q = context.createQueue("cb.context.listener");
            CompletableFuture<Map<String, Throwable>> result = new CompletableFuture<>();
            context.createConsumer(q).setMessageListener(m -> {
                Map<String, Call> calls = new LinkedHashMap<>();
                calls.put("JMSContext.close", context::close);
                calls.put("JMSContext.stop", context::stop);
                result.complete(attempt(calls));
            });
            try (JMSContext sender = context.createContext(JMSContext.AUTO_ACKNOWLEDGE)) {
                sender.createProducer().send(q, "x");
            }

            Map<String, Throwable> thrown = result.get(10, TimeUnit.SECONDS);
            assertThat(thrown.values()).hasSize(2)
                    .allSatisfy(e -> assertThat(e).isInstanceOf(IllegalStateRuntimeException.class));
        }
    }

    /**
     * JMS 3.1 section 7.3 and the Session.close, commit, rollback, MessageProducer.close and Connection.close javadoc:
     * a CompletionListener may not close, commit or roll back its own session (nor close its producer or connection):
     * IllegalStateException. Connection.stop is not among them: it works.
     */
    @Test
    void shouldRefuseCloseCommitAndRollbackButAllowStopInACompletionListener() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.SESSION_TRANSACTED);
            Queue q = s.createQueue("cb.completion");
            MessageProducer producer = s.createProducer(q);
            CompletableFuture<Map<String, Throwable>> result = new CompletableFuture<>();
            Map<String, Call> calls = new LinkedHashMap<>();
            calls.put("Session.close", s::close);
            calls.put("Session.commit", s::commit);
            calls.put("Session.rollback", s::rollback);
            calls.put("MessageProducer.close", producer::close);
            calls.put("Connection.close", c::close);
            calls.put("Connection.stop", c::stop);
            producer.send(s.createTextMessage("async"), onCompletion(result, calls));

            Map<String, Throwable> thrown = result.get(10, TimeUnit.SECONDS);
            assertThat(thrown.get("Connection.stop")).as("stop is allowed").isNull();
            thrown.remove("Connection.stop");
            assertThat(thrown).hasSize(5);
            assertThat(thrown.values()).allSatisfy(e -> assertThat(e).isInstanceOf(IllegalStateException.class));

            s.commit();
            c.start();
            Session reader = c.createSession(Session.AUTO_ACKNOWLEDGE);
            assertThat(text(reader.createConsumer(q).receive(10_000))).isEqualTo("async");
        }
    }

    /**
     * JMSContext javadoc and JMS 3.1 section 7.3: a CompletionListener may stop its own context, but not close, commit
     * or roll it back (IllegalStateRuntimeException).
     */
    @Test
    void shouldAllowStoppingAContextFromItsCompletionListener() throws Exception {
        try (JMSContext context = broker.factory().createContext(JMSContext.SESSION_TRANSACTED)) {
            Queue q = context.createQueue("cb.context.completion");
            CompletableFuture<Map<String, Throwable>> result = new CompletableFuture<>();
            Map<String, Call> calls = new LinkedHashMap<>();
            calls.put("JMSContext.stop", context::stop);
            calls.put("JMSContext.close", context::close);
            calls.put("JMSContext.commit", context::commit);
            calls.put("JMSContext.rollback", context::rollback);
            context.createProducer().setAsync(onCompletion(result, calls)).send(q, "async");

            Map<String, Throwable> thrown = result.get(10, TimeUnit.SECONDS);
            assertThat(thrown.get("JMSContext.stop")).as("stop is allowed").isNull();
            thrown.remove("JMSContext.stop");
            assertThat(thrown.values()).hasSize(3)
                    .allSatisfy(e -> assertThat(e).isInstanceOf(IllegalStateRuntimeException.class));

            context.commit();
            try (JMSContext reader = context.createContext(JMSContext.AUTO_ACKNOWLEDGE)) {
                assertThat(reader.createConsumer(q).receiveBody(String.class, 10_000)).isEqualTo("async");
            }
        }
    }

    private static String text(Message m) {
        try {
            assertThat(m).isNotNull();
            return ((TextMessage) m).getText();
        } catch (jakarta.jms.JMSException e) {
            throw new AssertionError(e);
        }
    }
}
