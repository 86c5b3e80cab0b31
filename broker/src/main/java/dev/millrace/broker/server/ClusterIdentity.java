package dev.millrace.broker.server;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Optional;
import java.util.Properties;

/**
 * The cluster id and node id a data directory belongs to, in {@code <data.dir>/meta.properties}:
 *
 * <pre>
 *  version=0
 *  cluster.id=&lt;base64 uuid&gt;
 *  node.id=&lt;int&gt;
 * </pre>
 *
 * The cluster id comes from the metadata quorum ({@link dev.millrace.broker.controller.MetadataImage#clusterId()}):
 * the first active controller commits the id it was given (this directory's id when it has one, else a fresh one),
 * and every node writes the quorum's id here on its first start. A later start fails, naming both ids, when
 * {@code node.id} differs from the stored one or when the quorum's cluster id differs from this directory's (a data
 * directory of another cluster, or a node pointed at another cluster's {@code controller.quorum.voters}), rather
 * than serve or mix another cluster's data.
 */
record ClusterIdentity(String clusterId, int nodeId) {

    static final String FILE_NAME = "meta.properties";

    /**
     * The identity stored in {@code dataDir}, if any.
     *
     * @throws IOException when the file is unreadable or belongs to another node id
     */
    static Optional<ClusterIdentity> load(File dataDir, int nodeId) throws IOException {
        File file = new File(dataDir, FILE_NAME);
        if (!file.exists()) {
            return Optional.empty();
        }
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file.toPath())) {
            p.load(in);
        }
        String clusterId = p.getProperty("cluster.id");
        String storedNode = p.getProperty("node.id");
        if (clusterId == null || storedNode == null) {
            throw new IOException(file + " must hold cluster.id and node.id");
        }
        if (Integer.parseInt(storedNode.trim()) != nodeId) {
            throw new IOException("Data directory " + dataDir + " (data.dir) belongs to node.id " + storedNode.trim()
                    + ", not node.id " + nodeId);
        }
        return Optional.of(new ClusterIdentity(clusterId.trim(), nodeId));
    }

    /**
     * Checks the quorum's cluster id against the stored identity, and stores it when there is none yet.
     *
     * @throws IOException when {@code dataDir} belongs to another cluster
     */
    static ClusterIdentity adopt(File dataDir, Optional<ClusterIdentity> stored, String quorumClusterId, int nodeId)
            throws IOException {
        if (stored.isPresent()) {
            if (!stored.get().clusterId().equals(quorumClusterId)) {
                throw new IOException("Data directory " + dataDir + " (data.dir) belongs to cluster "
                        + stored.get().clusterId() + ", but the metadata quorum (controller.quorum.voters) is cluster "
                        + quorumClusterId);
            }
            return stored.get();
        }
        ClusterIdentity identity = new ClusterIdentity(quorumClusterId, nodeId);
        identity.store(dataDir);
        return identity;
    }

    private void store(File dataDir) throws IOException {
        Properties p = new Properties();
        p.setProperty("version", "0");
        p.setProperty("cluster.id", clusterId);
        p.setProperty("node.id", String.valueOf(nodeId));
        File tmp = new File(dataDir, FILE_NAME + ".tmp");
        try (OutputStream out = Files.newOutputStream(tmp.toPath())) {
            p.store(out, "Millrace node identity");
        }
        Files.move(tmp.toPath(), new File(dataDir, FILE_NAME).toPath(), StandardCopyOption.ATOMIC_MOVE);
    }
}
