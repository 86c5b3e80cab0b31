package dev.millrace.samples.kafkainterop;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.samples.testbroker.SampleBroker;

@Timeout(60)
class KafkaInteropSampleIntegrationTest {

    @TempDir
    Path dataDir;

    @Test
    void shouldProcessKafkaRecordsAsJmsMessagesAndReturnEventsToAKafkaConsumer() throws Exception {
        try (SampleBroker broker = SampleBroker.start(dataDir)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            List<String> events = KafkaInteropSample.run(broker.bootstrap(), 6, Duration.ofSeconds(30),
                    new PrintStream(out, true, StandardCharsets.UTF_8));

            assertThat(events).as(out.toString(StandardCharsets.UTF_8)).hasSize(6);
            for (int i = 1; i <= 6; i++) {
                String suffix = "-" + i;
                String type = i % 2 == 0 ? "TextMessage" : "BytesMessage";
                // correlation id (the record key, via JMSXGroupID) and body made the round trip; marked records
                // arrived as TextMessages, the others as BytesMessages
                assertThat(events).filteredOn(e -> e.matches("order-\\w+" + suffix + ": .*"))
                        .singleElement().asString()
                        .matches("order-\\w+" + suffix + ": processed \\{\"id\":\"order-\\w+" + suffix
                                + "\",\"item\":\"widget\",\"quantity\":" + i + "\\} \\(" + type + "\\)");
            }
        }
    }
}
