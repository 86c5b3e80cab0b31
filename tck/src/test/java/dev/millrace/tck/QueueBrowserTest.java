package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.NOTHING_MS;
import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.InvalidSelectorException;
import jakarta.jms.Message;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/** QueueBrowser: looking at a queue without consuming. */
@TckTest
@Timeout(30)
@DisplayName("QueueBrowser (Session.createBrowser)")
class QueueBrowserTest {

    private static List<String> browse(QueueBrowser browser) throws Exception {
        List<String> texts = new ArrayList<>();
        Enumeration<?> e = browser.getEnumeration();
        while (e.hasMoreElements()) {
            texts.add(((TextMessage) e.nextElement()).getText());
        }
        return texts;
    }

    private static void send(Session s, Queue q, String... texts) throws Exception {
        MessageProducer producer = s.createProducer(q);
        for (String text : texts) {
            Message m = s.createTextMessage(text);
            m.setStringProperty("text", text);
            producer.send(m);
        }
    }

    @Test
    @DisplayName("QueueBrowser shows the queue's messages in order without consuming them")
    void shouldBrowseWithoutConsuming(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        send(s, q, "a", "b", "c");
        assertThat(browse(s.createBrowser(q))).containsExactly("a", "b", "c");
        var consumer = s.createConsumer(q);
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("a");
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("b");
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("c");
    }

    @Test
    @DisplayName("QueueBrowser of an empty queue has no elements")
    void shouldBrowseAnEmptyQueue(Jms jms) throws Exception {
        Session s = jms.session();
        assertThat(browse(s.createBrowser(jms.queue()))).isEmpty();
    }

    @Test
    @DisplayName("QueueBrowser with a selector shows only the selected messages")
    void shouldBrowseWithASelector(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        send(s, q, "a", "b", "c");
        QueueBrowser browser = s.createBrowser(q, "text <> 'b'");
        assertThat(browser.getMessageSelector()).isEqualTo("text <> 'b'");
        assertThat(browse(browser)).containsExactly("a", "c");
    }

    @Test
    @DisplayName("QueueBrowser does not show consumed messages")
    void shouldNotShowConsumedMessages(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        send(s, q, "a", "b");
        var consumer = s.createConsumer(q);
        assertThat(consumer.receive(RECEIVE_MS)).isNotNull();
        consumer.close();
        assertThat(browse(s.createBrowser(q))).containsExactly("b");
    }

    @Test
    @DisplayName("QueueBrowser.getQueue returns the browsed queue")
    void shouldReportTheQueue(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        assertThat(s.createBrowser(q).getQueue().getQueueName()).isEqualTo(q.getQueueName());
    }

    @Test
    @DisplayName("QueueBrowser with an invalid selector throws InvalidSelectorException")
    void shouldRefuseAnInvalidSelector(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        assertThatThrownBy(() -> s.createBrowser(q, "a = = 1")).isInstanceOf(InvalidSelectorException.class);
    }

    @Test
    @DisplayName("QueueBrowser does not show a message before its delivery time")
    void shouldNotShowADelayedMessage(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        producer.setDeliveryDelay(60_000);
        producer.send(s.createTextMessage("later"));
        producer.setDeliveryDelay(0);
        producer.send(s.createTextMessage("now"));
        assertThat(s.createConsumer(q).receive(RECEIVE_MS)).isNotNull();
        assertThat(browse(s.createBrowser(q))).isEmpty();
    }

    @Test
    @DisplayName("JMSContext.createBrowser shows messages; the queue still delivers them")
    void shouldBrowseInAContext(Jms jms) throws Exception {
        var context = jms.context();
        Queue q = jms.queue();
        context.createProducer().send(q, "x");
        assertThat(browse(context.createBrowser(q))).containsExactly("x");
        assertThat(context.createConsumer(q).receiveBody(String.class, RECEIVE_MS)).isEqualTo("x");
        assertThat(context.createConsumer(q).receiveBody(String.class, NOTHING_MS)).isNull();
    }
}
