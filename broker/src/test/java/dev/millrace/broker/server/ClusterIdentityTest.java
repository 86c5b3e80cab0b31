package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** meta.properties: a data directory keeps the cluster and node it first joined, and refuses another. */
@Timeout(10)
class ClusterIdentityTest {

    @TempDir
    Path dir;

    @Test
    void aFreshDirectoryAdoptsTheQuorumsClusterIdAndKeepsIt() throws IOException {
        assertThat(ClusterIdentity.load(dir.toFile(), 2)).isEmpty();

        ClusterIdentity adopted = ClusterIdentity.adopt(dir.toFile(), Optional.empty(), "cluster-b", 2);

        assertThat(adopted).isEqualTo(new ClusterIdentity("cluster-b", 2));
        assertThat(ClusterIdentity.load(dir.toFile(), 2)).contains(adopted);
        assertThat(ClusterIdentity.adopt(dir.toFile(), ClusterIdentity.load(dir.toFile(), 2), "cluster-b", 2))
                .isEqualTo(adopted);
    }

    @Test
    void aDirectoryOfAnotherClusterIsRefusedNamingBothClusters() throws IOException {
        ClusterIdentity.adopt(dir.toFile(), Optional.empty(), "cluster-a", 1);
        Optional<ClusterIdentity> stored = ClusterIdentity.load(dir.toFile(), 1);

        assertThatThrownBy(() -> ClusterIdentity.adopt(dir.toFile(), stored, "cluster-b", 1))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("data.dir").hasMessageContaining("cluster-a")
                .hasMessageContaining("controller.quorum.voters").hasMessageContaining("cluster-b");
    }

    @Test
    void aDirectoryOfAnotherNodeIsRefusedNamingBothIds() throws IOException {
        ClusterIdentity.adopt(dir.toFile(), Optional.empty(), "cluster-a", 1);

        assertThatThrownBy(() -> ClusterIdentity.load(dir.toFile(), 2)).isInstanceOf(IOException.class)
                .hasMessageContaining("data.dir").hasMessageContaining("node.id 1").hasMessageContaining("node.id 2");
    }
}
