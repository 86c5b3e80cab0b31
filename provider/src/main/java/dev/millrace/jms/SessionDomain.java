package dev.millrace.jms;

import jakarta.jms.IllegalStateException;

/**
 * The messaging domain a session was created for, and the methods that domain forbids.
 *
 * <p>A {@link MillraceSession} implements {@code Session}, {@code QueueSession} and {@code TopicSession} at once.
 * Sessions from {@code QueueConnection.createQueueSession} are {@link #QUEUE} sessions and refuse the
 * publish/subscribe methods with {@link IllegalStateException}, as the QueueSession javadoc requires
 * ({@code createDurableSubscriber}, {@code createDurableConsumer}, {@code createSharedConsumer},
 * {@code createSharedDurableConsumer}, {@code createTemporaryTopic}, {@code createTopic}, {@code unsubscribe});
 * sessions from {@code TopicConnection.createTopicSession} are {@link #TOPIC} sessions and refuse {@code createBrowser},
 * {@code createQueue} and {@code createTemporaryQueue} (TopicSession javadoc). Decision: the methods of the other
 * domain's interface that the same object also implements ({@code createSubscriber} and {@code createPublisher} on a
 * queue session, {@code createReceiver} and {@code createSender} on a topic session, reachable by a cast) are refused
 * too. The domain-neutral {@code createConsumer} and {@code createProducer} are left alone. Sessions from
 * {@code Connection.createSession} and JMSContexts are {@link #ANY}: unrestricted.
 *
 * <p>Immutable.
 */
enum SessionDomain {
    /** A plain {@code Session}: every method allowed. */
    ANY,
    /** A {@code QueueSession}: no publish/subscribe methods. */
    QUEUE,
    /** A {@code TopicSession}: no point-to-point methods. */
    TOPIC;

    /** Refuses {@code method}, a publish/subscribe one, on a queue session. */
    void checkTopicMethod(String method) throws IllegalStateException {
        if (this == QUEUE) {
            throw new IllegalStateException(method + " is a publish/subscribe method; a QueueSession may not use it "
                    + "(create the session with Connection.createSession to use both domains)");
        }
    }

    /** Refuses {@code method}, a point-to-point one, on a topic session. */
    void checkQueueMethod(String method) throws IllegalStateException {
        if (this == TOPIC) {
            throw new IllegalStateException(method + " is a point-to-point method; a TopicSession may not use it "
                    + "(create the session with Connection.createSession to use both domains)");
        }
    }
}
