package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.jms.message.MillraceTextMessage;
import jakarta.jms.CompletionListener;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.TextMessage;

/** The order and threading of CompletionListener calls, on a delivery "thread" the test runs by hand. */
@Timeout(10)
class AsyncSendsTest {

    private final Deque<Runnable> deliveryTasks = new ArrayDeque<>();
    private final Executor deliveryThread = deliveryTasks::add;
    private final ReentrantLock deliveryLock = new ReentrantLock();
    private final AsyncSends sends = new AsyncSends(deliveryThread, deliveryLock, 50);
    private final List<String> calls = new ArrayList<>();

    private final CompletionListener listener = new CompletionListener() {
        @Override
        public void onCompletion(Message message) {
            calls.add(text(message) + " ok" + (deliveryLock.isHeldByCurrentThread() ? " locked" : "")
                    + (sends.inListener() ? " in" : ""));
        }

        @Override
        public void onException(Message message, Exception exception) {
            calls.add(text(message) + " failed: " + exception.getMessage());
        }
    };

    private static String text(Message message) {
        try {
            return ((TextMessage) message).getText();
        } catch (JMSException e) {
            throw new AssertionError(e);
        }
    }

    private AsyncSends.Pending send(String text) throws JMSException {
        MillraceTextMessage message = new MillraceTextMessage();
        message.setText(text);
        AsyncSends.Pending pending = new AsyncSends.Pending(null, message, listener);
        sends.add(pending);
        return pending;
    }

    private void runDeliveryThread() {
        Runnable task;
        while ((task = deliveryTasks.poll()) != null) {
            task.run();
        }
    }

    @Test
    void callbacksRunInSendOrderOnTheDeliveryThreadUnderItsLock() throws Exception {
        AsyncSends.Pending first = send("a");
        AsyncSends.Pending second = send("b");
        AsyncSends.Pending third = send("c");

        second.complete(null); // the broker answered b first
        sends.onDone();
        assertThat(calls).as("nothing runs on the caller's thread").isEmpty();
        runDeliveryThread();
        assertThat(calls).as("b waits for a").isEmpty();

        first.complete(null);
        sends.onDone();
        third.complete(new Exception("refused"));
        sends.onDone();
        runDeliveryThread();

        assertThat(calls).containsExactly("a ok locked in", "b ok locked in", "c failed: refused");
        assertThat(sends.inListener()).isFalse();
        sends.await(null); // nothing left: returns at once
    }

    @Test
    void awaitGivesUpAfterItsTimeoutWhileASendIsUnanswered() throws Exception {
        send("a");
        assertThatThrownBy(() -> sends.await(null)).isInstanceOf(JMSException.class)
                .hasMessageContaining("did not complete within 50 ms");
    }
}
