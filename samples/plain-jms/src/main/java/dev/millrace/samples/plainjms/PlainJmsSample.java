package dev.millrace.samples.plainjms;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;

import javax.naming.Context;

import jakarta.jms.ConnectionFactory;
import jakarta.jms.Queue;
import jakarta.jms.Topic;

/**
 * Plain JMS with nothing but {@code jakarta.jms} and JNDI: the connection factory and destinations come from
 * {@code jndi.properties}. Runs three scenarios one after the other and prints what happened:
 * <ol>
 *   <li>queue: three orders sent before any consumer exists, then received;</li>
 *   <li>topic: three prices published to two subscribers, each gets all three;</li>
 *   <li>request/reply: three requests answered through a temporary queue, matched by JMSCorrelationID.</li>
 * </ol>
 *
 * <pre>
 *   java -jar samples/plain-jms/target/millrace-sample-plain-jms.jar [brokers]   (default: jndi.properties)
 * </pre>
 *
 * Exits with status 1 if any scenario did not get everything it expected within the timeout. The scenarios run one
 * after the other on the calling thread (listeners on their sessions' delivery threads).
 */
public final class PlainJmsSample {

    static final long TIMEOUT_MS = 10_000;

    private PlainJmsSample() {
    }

    public static void main(String[] args) throws Exception {
        boolean ok = run(args.length > 0 ? args[0] : null, System.out);
        System.exit(ok ? 0 : 1);
    }

    /** Runs the three scenarios, printing to {@code out}; true if each got everything it expected. */
    static boolean run(String brokers, PrintStream out) throws Exception {
        Context jndi = Jndi.open(brokers);
        try {
            ConnectionFactory factory = (ConnectionFactory) jndi.lookup("ConnectionFactory");
            Queue orders = (Queue) jndi.lookup("jms/Orders");
            Topic prices = (Topic) jndi.lookup("jms/Prices");
            Queue priceRequests = (Queue) jndi.lookup("jms/PriceRequests");
            out.println("connection factory: " + factory);

            List<String> sent = List.of("order-1", "order-2", "order-3");
            List<String> received = QueueSendReceive.sendThenReceive(factory, orders, sent, TIMEOUT_MS);
            out.println("queue " + orders.getQueueName() + ": sent " + sent + ", received " + received);
            boolean ok = received.equals(sent);

            List<String> published = List.of("EUR 1.10", "EUR 1.11", "EUR 1.09");
            Map<String, List<String>> got = TopicPublishSubscribe.publishToSubscribers(factory, prices,
                    List.of("dashboard", "audit"), published, TIMEOUT_MS);
            String topicName = prices.getTopicName();
            got.forEach((subscriber, texts) -> out.println("topic " + topicName + ": subscriber " + subscriber
                    + " received " + texts));
            ok &= got.values().stream().allMatch(published::equals);

            try (PriceResponder responder = new PriceResponder(factory, priceRequests);
                 PriceRequester requester = new PriceRequester(factory, priceRequests)) {
                for (String item : List.of("apple", "pear", "quince")) {
                    String answer = requester.request(item, TIMEOUT_MS);
                    out.println("request/reply: " + item + " -> " + answer);
                    ok &= PriceResponder.price(item).equals(answer);
                }
            }
            out.println(ok ? "plain JMS sample: OK" : "plain JMS sample: FAILED (see above)");
            return ok;
        } finally {
            jndi.close();
        }
    }
}
