package dev.millrace.jms;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import jakarta.jms.CompletionListener;
import jakarta.jms.JMSException;
import jakarta.jms.Message;

/**
 * A session's asynchronous sends waiting for their {@link CompletionListener} calls (JMS 3.1 section 7.3): the calls
 * run on the session's delivery thread under its delivery lock, so never concurrently with each other or with the
 * session's MessageListeners, and in send order, since a send whose broker answer came first still waits for those
 * sent before it. Closing, committing and rolling back the session (or closing a producer) wait for them.
 *
 * <p>Thread-safe: sends are added by the application's thread, completed by the Kafka producer's I/O thread.
 */
final class AsyncSends {

    private final Deque<Pending> pending = new ArrayDeque<>();
    private final Executor deliveryThread;
    private final ReentrantLock deliveryLock;
    private final long timeoutMs;
    /** Whether the delivery thread is inside a CompletionListener. */
    private volatile boolean inListener;

    /**
     * @param deliveryThread the session's delivery thread (an executor running one task at a time)
     * @param deliveryLock   held while a listener of the session runs
     * @param timeoutMs      how long {@link #await} waits
     */
    AsyncSends(Executor deliveryThread, ReentrantLock deliveryLock, long timeoutMs) {
        this.deliveryThread = deliveryThread;
        this.deliveryLock = deliveryLock;
        this.timeoutMs = timeoutMs;
    }

    /** Adds a send before it is handed to the Kafka producer. */
    void add(Pending send) {
        synchronized (pending) {
            pending.addLast(send);
        }
    }

    /** Called once a send is {@link Pending#complete}d: runs the listeners now due, on the delivery thread. */
    void onDone() {
        try {
            deliveryThread.execute(this::runCompleted);
        } catch (RejectedExecutionException e) {
            runCompleted(); // the session is closing: its close waits for these
        }
    }

    private void runCompleted() {
        while (true) {
            Pending head;
            synchronized (pending) {
                head = pending.peekFirst();
                if (head == null || !head.done || head.claimed) {
                    return;
                }
                head.claimed = true;
            }
            deliveryLock.lock();
            inListener = true;
            try {
                head.runListener();
            } finally {
                inListener = false;
                deliveryLock.unlock();
                // only now: await (producer or session close, commit) returns after the callback, not before it
                synchronized (pending) {
                    pending.remove(head);
                    pending.notifyAll();
                }
            }
        }
    }

    /** Whether the delivery thread runs a CompletionListener now (the caller checks it is that thread). */
    boolean inListener() {
        return inListener;
    }

    /** Waits until every send of {@code producer} (all when null) has had its callback. */
    void await(MillraceMessageProducer producer) throws JMSException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        synchronized (pending) {
            while (pending.stream().anyMatch(s -> producer == null || s.producer == producer)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new JMSException("async sends did not complete within " + timeoutMs + " ms");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(pending, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new JMSException("interrupted while waiting for async sends");
                }
            }
        }
    }

    /** One asynchronous send waiting for its CompletionListener call. */
    static final class Pending {
        private final MillraceMessageProducer producer;
        private final Message message;
        private final CompletionListener listener;
        private volatile boolean done;
        private volatile Exception failure;
        /** Whether a thread runs (or ran) its callback; under the deque's monitor. */
        private boolean claimed;

        Pending(MillraceMessageProducer producer, Message message, CompletionListener listener) {
            this.producer = producer;
            this.message = message;
            this.listener = listener;
        }

        /** Records the broker's answer: null for success. */
        void complete(Exception failure) {
            this.failure = failure;
            this.done = true;
        }

        private void runListener() {
            try {
                if (failure == null) {
                    listener.onCompletion(message);
                } else {
                    listener.onException(message, failure);
                }
            } catch (RuntimeException e) {
                // a failing callback must not stop the others
            }
        }
    }
}
