package dev.millrace.bench.e2e;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;

/** What the cluster benchmarks wait for and look up through the Admin API, for Millrace and Kafka alike. */
final class ClusterWaits {

    private ClusterWaits() {
    }

    /** The leader of {@code topic}-{@code partition}, asking again for up to 20 s while there is none. */
    static int leaderOf(Admin admin, String topic, int partition) throws InterruptedException {
        for (int attempt = 0; attempt < 100; attempt++) {
            try {
                TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames()
                        .get(10, TimeUnit.SECONDS).get(topic);
                TopicPartitionInfo info = description.partitions().get(partition);
                if (info.leader() != null && !info.leader().isEmpty()) {
                    return info.leader().id();
                }
            } catch (Exception e) {
                // retried below
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("no leader of " + topic + "-" + partition);
    }

    /** Waits until every partition of {@code topics} has a leader and {@code nodes} replicas in its ISR. */
    static void awaitFullIsr(Admin admin, Collection<String> topics, int nodes, Duration timeout, String side)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            try {
                Map<String, TopicDescription> described = admin.describeTopics(topics).allTopicNames()
                        .get(10, TimeUnit.SECONDS);
                boolean full = true;
                StringBuilder state = new StringBuilder();
                for (TopicDescription description : described.values()) {
                    for (TopicPartitionInfo info : description.partitions()) {
                        state.append(description.name()).append('-').append(info.partition()).append(" isr ")
                                .append(info.isr().stream().map(n -> Integer.toString(n.id())).toList())
                                .append("; ");
                        full &= info.leader() != null && !info.leader().isEmpty() && info.isr().size() == nodes;
                    }
                }
                if (full) {
                    return;
                }
                last = state.toString();
            } catch (Exception e) {
                last = e.toString();
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException(side + ": the ISR did not fill up again within " + timeout.toSeconds()
                + " s: " + last);
    }

    /** The nodes' addresses, comma-separated, for {@code bootstrap.servers}. */
    static String bootstrap(BrokerNode[] nodes) {
        List<String> all = new ArrayList<>();
        for (BrokerNode node : nodes) {
            all.add(node.bootstrap());
        }
        return String.join(",", all);
    }
}
