package dev.millrace.chaos;

import java.io.File;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;

import dev.millrace.broker.cluster.ClusterProcesses;

/**
 * What a failed chaos run leaves for diagnosis beside the node logs: each running broker's thread dump (written
 * next to its log as {@code node-N.threads}, by the JDK's {@code jcmd}) and, printed, every share group as the
 * cluster describes it (members, their assignment) with its start offsets. Best effort: what cannot be had is
 * printed as such.
 */
final class StallDiagnostics {

    private StallDiagnostics() {
    }

    static void dumpBrokerThreads(ClusterProcesses cluster, Path dir) {
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        for (int id : cluster.nodeIds()) {
            if (!cluster.isRunning(id)) {
                continue;
            }
            File out = dir.resolve("node-" + id + ".threads").toFile();
            try {
                Process p = new ProcessBuilder(jcmd, Long.toString(cluster.pid(id)), "Thread.print")
                        .redirectErrorStream(true).redirectOutput(out).start();
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
                System.out.println("FailoverChaos node " + id + " threads: " + out);
            } catch (Exception e) {
                System.out.println("FailoverChaos node " + id + " threads not dumped: " + e);
            }
        }
    }

    static void printShareGroups(Admin admin) {
        try {
            List<String> groups = admin.listGroups(ListGroupsOptions.forShareGroups()).all().get(30, TimeUnit.SECONDS)
                    .stream().map(GroupListing::groupId).sorted().toList();
            Map<String, ShareGroupDescription> described = admin.describeShareGroups(groups).all()
                    .get(30, TimeUnit.SECONDS);
            Map<String, ListShareGroupOffsetsSpec> specs = groups.stream()
                    .collect(Collectors.toMap(g -> g, g -> new ListShareGroupOffsetsSpec()));
            var offsets = admin.listShareGroupOffsets(specs).all().get(30, TimeUnit.SECONDS);
            for (String group : groups) {
                ShareGroupDescription d = described.get(group);
                System.out.println("FailoverChaos share group " + group + ": state " + d.groupState() + ", epoch "
                        + d.groupEpoch() + ", coordinator " + d.coordinator() + ", members "
                        + d.members().stream().map(m -> m.consumerId() + "@" + m.host() + " "
                                + m.assignment().topicPartitions()).toList()
                        + ", start offsets " + offsets.get(group));
            }
        } catch (Exception e) {
            System.out.println("FailoverChaos share groups not described: " + e);
        }
    }
}
