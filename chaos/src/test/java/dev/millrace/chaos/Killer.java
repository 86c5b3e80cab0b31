package dev.millrace.chaos;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;

import dev.millrace.broker.cluster.ClusterProcesses;

/**
 * The chaos schedule: before each kill it waits until every replica of every topic is in sync again (so one kill
 * never takes two replicas away); then it draws a node with the seeded random, notes what that node was (the active
 * controller, the leader of which coordinator partitions), SIGKILLs it, waits until the clients made progress
 * without it, and starts it again. The schedule (kill number, node, roles) is kept for the failure message, so a run
 * can be replayed with its seed.
 */
final class Killer {

    /** One kill: which node and what it was when it died. */
    record Kill(int number, int node, String roles) {
        @Override
        public String toString() {
            return "#" + number + " node " + node + " (" + roles + ")";
        }
    }

    private final ClusterProcesses cluster;
    private final Admin admin;
    private final Random random;
    private final long seed;
    private final List<Kill> schedule = new ArrayList<>();

    Killer(ClusterProcesses cluster, Admin admin, long seed) {
        this.cluster = cluster;
        this.admin = admin;
        this.seed = seed;
        this.random = new Random(seed);
    }

    List<Kill> schedule() {
        return schedule;
    }

    /**
     * Runs {@code kills} kills. {@code progress} is the clients' count of acknowledged sends: after each kill the
     * node stays down until it grew by {@code progressPerKill}.
     */
    void run(int kills, LongSupplier progress, long progressPerKill) throws Exception {
        for (int number = 1; number <= kills; number++) {
            awaitAllInSync("all replicas in sync before kill " + number);
            rebalanceLeaders();
            int victim = cluster.nodeIds().get(random.nextInt(cluster.nodeIds().size()));
            Kill kill = new Kill(number, victim, rolesOf(victim));
            schedule.add(kill);
            System.out.println("FailoverChaos seed=" + seed + " kill " + kill);
            long before = progress.getAsLong();
            cluster.kill(victim);
            await(() -> progress.getAsLong() >= before + progressPerKill, "the clients' progress with node "
                    + victim + " killed (kill " + number + ")", TimeUnit.MINUTES.toMillis(3));
            cluster.restart(victim);
        }
        awaitAllInSync("all replicas in sync after the last kill");
    }

    /**
     * Moves every partition's leadership back to its preferred replica, so that a restarted node leads (and
     * coordinates) again and the next kill can hit coordinators; partitions already there are left alone.
     */
    private void rebalanceLeaders() {
        try {
            admin.electLeaders(org.apache.kafka.common.ElectionType.PREFERRED, null).all().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            // ELECTION_NOT_NEEDED for partitions already led by their preferred replica; the kill goes on regardless
        }
    }

    /** What {@code node} is now: active controller, and leader of which coordinator partitions. */
    private String rolesOf(int node) {
        List<String> roles = new ArrayList<>();
        try {
            if (admin.describeCluster().controller().get(10, TimeUnit.SECONDS).id() == node) {
                roles.add("active controller");
            }
            for (TopicDescription topic : describeAll(true).values()) {
                if (!topic.name().startsWith("__")) {
                    continue;
                }
                long led = topic.partitions().stream().filter(p -> p.leader() != null && p.leader().id() == node)
                        .count();
                if (led > 0) {
                    roles.add("leads " + led + " of " + topic.name());
                }
            }
        } catch (Exception e) {
            roles.add("roles unknown: " + e);
        }
        return roles.isEmpty() ? "no coordinator partition" : String.join(", ", roles);
    }

    private Map<String, TopicDescription> describeAll(boolean internal) throws Exception {
        Collection<String> names = admin.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions()
                .listInternal(internal)).names().get(30, TimeUnit.SECONDS);
        return admin.describeTopics(names).allTopicNames().get(30, TimeUnit.SECONDS);
    }

    void awaitAllInSync(String what) throws Exception {
        int nodes = cluster.nodeIds().size();
        await(() -> {
            try {
                for (TopicDescription topic : describeAll(true).values()) {
                    for (TopicPartitionInfo p : topic.partitions()) {
                        if (p.isr().size() < Math.min(nodes, p.replicas().size()) || p.leader() == null) {
                            return false;
                        }
                    }
                }
                return true;
            } catch (Exception e) {
                return false;
            }
        }, what, TimeUnit.MINUTES.toMillis(3));
    }

    private void await(BooleanSupplier condition, String what, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("seed " + seed + ": no " + what + " within " + timeoutMs + " ms; kills so far: "
                        + schedule);
            }
            synchronized (this) {
                wait(100);
            }
        }
    }
}
