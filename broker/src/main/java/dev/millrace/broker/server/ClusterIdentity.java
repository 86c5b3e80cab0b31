package dev.millrace.broker.server;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Properties;

import org.apache.kafka.common.Uuid;

/**
 * The cluster id and node id a data directory belongs to, in {@code <data.dir>/meta.properties}:
 *
 * <pre>
 *  version=0
 *  cluster.id=&lt;base64 uuid&gt;
 *  node.id=&lt;int&gt;
 * </pre>
 *
 * Created on first start; a later start with a different {@code node.id} fails, naming both ids,
 * rather than serving another node's data.
 */
record ClusterIdentity(String clusterId, int nodeId) {

    static final String FILE_NAME = "meta.properties";

    static ClusterIdentity loadOrCreate(File dataDir, int nodeId) throws IOException {
        File file = new File(dataDir, FILE_NAME);
        if (file.exists()) {
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
                throw new IOException("Data directory " + dataDir + " belongs to node.id " + storedNode.trim()
                        + ", not node.id " + nodeId);
            }
            return new ClusterIdentity(clusterId.trim(), nodeId);
        }
        ClusterIdentity identity = new ClusterIdentity(Uuid.randomUuid().toString(), nodeId);
        Properties p = new Properties();
        p.setProperty("version", "0");
        p.setProperty("cluster.id", identity.clusterId());
        p.setProperty("node.id", String.valueOf(nodeId));
        File tmp = new File(dataDir, FILE_NAME + ".tmp");
        try (OutputStream out = Files.newOutputStream(tmp.toPath())) {
            p.store(out, "Millrace node identity");
        }
        Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.ATOMIC_MOVE);
        return identity;
    }
}
