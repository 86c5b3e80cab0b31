package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.NOTHING_MS;
import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.CompletionListener;
import jakarta.jms.DeliveryMode;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/** Sending: producer defaults, asynchronous send with a CompletionListener, delivery delay. */
@TckTest
@Timeout(30)
@DisplayName("7 Sending messages: producers, async send, delivery delay")
class ProducerTest {

    /** Completes with the message on onCompletion, exceptionally on onException. */
    private static final class Completion implements CompletionListener {
        final CompletableFuture<Message> done = new CompletableFuture<>();

        @Override
        public void onCompletion(Message message) {
            done.complete(message);
        }

        @Override
        public void onException(Message message, Exception exception) {
            done.completeExceptionally(exception);
        }
    }

    @Test
    @DisplayName("7 MessageProducer defaults: PERSISTENT, priority 4, time to live 0, delivery delay 0")
    void shouldHaveTheSpecifiedDefaults(Jms jms) throws Exception {
        MessageProducer producer = jms.session().createProducer(jms.queue());
        assertThat(producer.getDeliveryMode()).isEqualTo(DeliveryMode.PERSISTENT);
        assertThat(producer.getPriority()).isEqualTo(4);
        assertThat(producer.getTimeToLive()).isZero();
        assertThat(producer.getDeliveryDelay()).isZero();
        assertThat(producer.getDisableMessageID()).isFalse();
        assertThat(producer.getDisableMessageTimestamp()).isFalse();
    }

    @Test
    @DisplayName("7.3 async send: the CompletionListener gets the message once the send completed")
    void shouldCompleteAnAsyncSend(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        TextMessage m = s.createTextMessage("async");
        Completion completion = new Completion();
        s.createProducer(q).send(m, completion);
        Message completed = completion.done.get(RECEIVE_MS, TimeUnit.MILLISECONDS);
        assertThat(completed).isSameAs(m);
        assertThat(completed.getJMSMessageID()).startsWith("ID:");
        assertThat(((TextMessage) s.createConsumer(q).receive(RECEIVE_MS)).getText()).isEqualTo("async");
    }

    @Test
    @DisplayName("7.3.3 async sends of one session complete in send order")
    void shouldCompleteAsyncSendsInOrder(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        List<String> order = new ArrayList<>();
        CountDownLatch all = new CountDownLatch(20);
        for (int i = 0; i < 20; i++) {
            producer.send(s.createTextMessage("m" + i), new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                    try {
                        synchronized (order) {
                            order.add(((TextMessage) message).getText());
                        }
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                    all.countDown();
                }

                @Override
                public void onException(Message message, Exception exception) {
                    all.countDown();
                }
            });
        }
        assertThat(all.await(RECEIVE_MS, TimeUnit.MILLISECONDS)).isTrue();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            expected.add("m" + i);
        }
        synchronized (order) {
            assertThat(order).isEqualTo(expected);
        }
    }

    @Test
    @DisplayName("7.3.4 MessageProducer.close waits for the outstanding async sends to complete")
    void shouldCompleteOutstandingSendsOnClose(Jms jms) throws Exception {
        Session s = jms.session();
        MessageProducer producer = s.createProducer(jms.queue());
        List<Completion> completions = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Completion c = new Completion();
            completions.add(c);
            producer.send(s.createTextMessage("m" + i), c);
        }
        producer.close();
        for (Completion c : completions) {
            assertThat(c.done).isCompleted();
        }
    }

    @Test
    @DisplayName("7.3 JMSProducer.setAsync: the CompletionListener is called for a JMSContext send")
    void shouldCompleteAnAsyncJmsProducerSend(Jms jms) throws Exception {
        JMSContext context = jms.context();
        Queue q = jms.queue();
        Completion completion = new Completion();
        context.createProducer().setAsync(completion).send(q, "async");
        assertThat(completion.done.get(RECEIVE_MS, TimeUnit.MILLISECONDS)).isInstanceOf(TextMessage.class);
        assertThat(context.createConsumer(q).receiveBody(String.class, RECEIVE_MS)).isEqualTo("async");
    }

    @Test
    @DisplayName("7.3 async send with a null CompletionListener throws IllegalArgumentException")
    void shouldRefuseANullCompletionListener(Jms jms) throws Exception {
        Session s = jms.session();
        MessageProducer producer = s.createProducer(jms.queue());
        assertThatThrownBy(() -> producer.send(s.createTextMessage("x"), (CompletionListener) null))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("7.9 delivery delay: a delayed message is not delivered before JMSDeliveryTime, then is")
    void shouldHoldADelayedMessage(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        producer.setDeliveryDelay(1500);
        assertThat(producer.getDeliveryDelay()).isEqualTo(1500);
        MessageConsumer consumer = s.createConsumer(q);
        TextMessage m = s.createTextMessage("later");
        long before = System.currentTimeMillis();
        producer.send(m);
        assertThat(m.getJMSDeliveryTime()).isGreaterThanOrEqualTo(before + 1500);
        assertThat(consumer.receive(NOTHING_MS)).isNull();
        Message in = consumer.receive(RECEIVE_MS);
        assertThat(in).isNotNull();
        assertThat(System.currentTimeMillis()).isGreaterThanOrEqualTo(m.getJMSDeliveryTime());
    }

    @Test
    @DisplayName("7.9 delivery delay: an undelayed message sent later overtakes a delayed one")
    void shouldDeliverAnUndelayedMessageFirst(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        producer.setDeliveryDelay(1000);
        producer.send(s.createTextMessage("delayed"));
        producer.setDeliveryDelay(0);
        producer.send(s.createTextMessage("now"));
        MessageConsumer consumer = s.createConsumer(q);
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("now");
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("delayed");
    }

    @Test
    @DisplayName("7.9 delivery delay on a topic: the subscriber gets the message after the delay")
    void shouldDelayOnATopic(Jms jms) throws Exception {
        Session s = jms.session();
        var topic = jms.topic();
        MessageConsumer consumer = s.createConsumer(topic);
        MessageProducer producer = s.createProducer(topic);
        producer.setDeliveryDelay(1500);
        TextMessage m = s.createTextMessage("later");
        producer.send(m);
        assertThat(consumer.receive(NOTHING_MS)).isNull();
        assertThat(consumer.receive(RECEIVE_MS)).isNotNull();
        assertThat(System.currentTimeMillis()).isGreaterThanOrEqualTo(m.getJMSDeliveryTime());
    }

    @Test
    @DisplayName("7.9 JMSProducer.setDeliveryDelay holds the message of a JMSContext send")
    void shouldDelayAJmsProducerSend(Jms jms) {
        JMSContext context = jms.context();
        Queue q = jms.queue();
        var consumer = context.createConsumer(q);
        context.createProducer().setDeliveryDelay(1500).send(q, "later");
        assertThat(consumer.receiveBody(String.class, NOTHING_MS)).isNull();
        assertThat(consumer.receiveBody(String.class, RECEIVE_MS)).isEqualTo("later");
    }

    @Test
    @DisplayName("7 send(message, deliveryMode, priority, timeToLive) applies the arguments")
    void shouldApplySendArguments(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        s.createProducer(q).send(s.createTextMessage("x"), DeliveryMode.NON_PERSISTENT, 8, 60_000);
        Message in = s.createConsumer(q).receive(RECEIVE_MS);
        assertThat(in.getJMSDeliveryMode()).isEqualTo(DeliveryMode.NON_PERSISTENT);
        assertThat(in.getJMSPriority()).isEqualTo(8);
        assertThat(in.getJMSExpiration()).isEqualTo(in.getJMSTimestamp() + 60_000);
    }

    @Test
    @DisplayName("7 a closed producer throws IllegalStateException from send; close twice is ignored")
    void shouldRefuseSendOnAClosedProducer(Jms jms) throws Exception {
        Session s = jms.session();
        MessageProducer producer = s.createProducer(jms.queue());
        producer.close();
        producer.close();
        assertThatThrownBy(() -> producer.send(s.createTextMessage("x"))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("7 NON_PERSISTENT messages are delivered")
    void shouldDeliverNonPersistentMessages(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
        for (int i = 0; i < 5; i++) {
            producer.send(s.createTextMessage("m" + i));
        }
        MessageConsumer consumer = s.createConsumer(q);
        for (int i = 0; i < 5; i++) {
            assertThat(consumer.receive(RECEIVE_MS)).isNotNull();
        }
    }
}
