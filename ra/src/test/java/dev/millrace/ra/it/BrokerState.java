package dev.millrace.ra.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ShareGroupDescription;

import jakarta.jms.JMSContext;
import jakarta.jms.Message;

/** What the container suites ask the test broker directly: share-group members, where lost messages went. */
final class BrokerState {

    private BrokerState() {
    }

    /** What became of the messages missing from {@code forwarded}: still on the queue, or in the forwarded log. */
    static String describeMissing(JMSContext client, List<String> forwarded) {
        Set<String> missing = new java.util.TreeSet<>();
        for (int i = 0; i < 300; i++) {
            if (!forwarded.contains("load-" + i)) {
                missing.add("load-" + i);
            }
        }
        List<String> onQueue = new ArrayList<>();
        try {
            var browser = client.createBrowser(client.createQueue("it.load"));
            var e = browser.getEnumeration();
            while (e.hasMoreElements()) {
                onQueue.add(((Message) e.nextElement()).getBody(String.class));
            }
        } catch (Exception ex) {
            onQueue.add("browse failed: " + ex);
        }
        List<String> inLog = new ArrayList<>();
        try (var consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]>(Map.of(
                "bootstrap.servers", MillraceBrokerExtension.bootstrap(), "isolation.level", "read_committed",
                "key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer",
                "value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer"))) {
            var tp = new org.apache.kafka.common.TopicPartition("it.load.done", 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.currentTimeMillis() + 10_000;
            while (consumer.position(tp) < end && System.currentTimeMillis() < deadline) {
                for (var r : consumer.poll(java.time.Duration.ofMillis(500))) {
                    String body = new String(r.value(), java.nio.charset.StandardCharsets.UTF_8);
                    if (missing.contains(body)) {
                        inLog.add(r.offset() + ":" + body);
                    }
                }
            }
        }
        return "missing " + missing + ", still on it.load: " + onQueue + ", in it.load.done's log: " + inLog
                + ", received " + forwarded.size();
    }

    /** How many members the share group {@code group} has now. */
    static int shareGroupMembers(Admin admin, String group) throws Exception {
        ShareGroupDescription d = admin.describeShareGroups(List.of(group)).all().get(10, TimeUnit.SECONDS)
                .get(group);
        return d.members().size();
    }
}
