package dev.millrace.samples.pooledjms;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.messaginghub.pooled.jms.JmsPoolConnectionFactory;

import dev.millrace.jms.MillraceConnectionFactory;
import dev.millrace.samples.testbroker.SampleBroker;

@Timeout(60)
class PooledJmsSampleIntegrationTest {

    @TempDir
    Path dataDir;

    @Test
    void shouldSendEveryMessageThroughAtMostTwoPooledConnections() throws Exception {
        try (SampleBroker broker = SampleBroker.start(dataDir)) {
            JmsPoolConnectionFactory pool = PooledJmsSample.pool(new MillraceConnectionFactory(broker.bootstrap()));
            try {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                PooledJmsSample.Result result = PooledJmsSample.run(pool, "pooled-test", 4, 15,
                        new PrintStream(out, true, StandardCharsets.UTF_8));

                Set<String> expected = new HashSet<>();
                for (int t = 0; t < 4; t++) {
                    for (int i = 0; i < 15; i++) {
                        expected.add("order-" + t + "-" + i);
                    }
                }
                assertThat(result.received()).isEqualTo(expected);
                assertThat(result.ok()).isTrue();
                assertThat(result.pooledConnections()).isBetween(1, PooledJmsSample.MAX_CONNECTIONS);
                assertThat(out.toString(StandardCharsets.UTF_8)).contains("received 60 distinct messages");
            } finally {
                pool.stop();
            }
        }
    }
}
