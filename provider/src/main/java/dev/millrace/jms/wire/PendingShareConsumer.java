package dev.millrace.jms.wire;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.consumer.KafkaShareConsumer;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.JmsExceptions;
import jakarta.jms.JMSException;

/**
 * A {@link KafkaShareConsumer} being constructed on a thread of its own while the creating thread does other work:
 * a queue consumer's setup (the destination's existence, its group's settings, its dead-letter queue) is a few admin
 * round trips, and constructing the share consumer mostly waits for kafka-clients' network thread to start, so the
 * two overlap. Nothing reaches the broker before the consumer is subscribed, which its {@link ShareFetcher} does
 * after the setup, so the group's settings are in place before the member joins.
 *
 * <p>Either {@link #get} (the caller owns the consumer) or {@link #discard} (it is closed once built), once.
 */
public final class PendingShareConsumer {

    private final CompletableFuture<KafkaShareConsumer<byte[], byte[]>> consumer;
    private final long timeoutMs;

    private PendingShareConsumer(CompletableFuture<KafkaShareConsumer<byte[], byte[]>> consumer, long timeoutMs) {
        this.consumer = consumer;
        this.timeoutMs = timeoutMs;
    }

    /** Starts constructing the consumer {@link KafkaClients#shareConsumer} describes. */
    public static PendingShareConsumer start(ConnectionSettings settings, String clientId, String groupId,
                                             int maxPollRecords, String rack) {
        CompletableFuture<KafkaShareConsumer<byte[], byte[]>> future = CompletableFuture.supplyAsync(
                () -> KafkaClients.shareConsumer(settings, clientId, groupId, maxPollRecords, rack),
                task -> {
                    Thread t = new Thread(task, "millrace-share-setup-" + groupId);
                    t.setDaemon(true);
                    t.start();
                });
        return new PendingShareConsumer(future, settings.requestTimeoutMs());
    }

    /** The constructed consumer, waiting up to the request timeout for it. */
    public KafkaShareConsumer<byte[], byte[]> get() throws JMSException {
        try {
            return consumer.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            discard();
            throw JmsExceptions.fromClient("create a queue consumer", e);
        } catch (ExecutionException e) {
            throw JmsExceptions.fromClient("create a queue consumer", e.getCause());
        } catch (TimeoutException e) {
            discard();
            throw JmsExceptions.fromClient("create a queue consumer (not constructed within " + timeoutMs + " ms)", e);
        }
    }

    /** Closes the consumer once it is constructed (at once if it is), without waiting; for a setup that failed. */
    public void discard() {
        consumer.thenAccept(c -> c.close(Duration.ZERO));
    }
}
