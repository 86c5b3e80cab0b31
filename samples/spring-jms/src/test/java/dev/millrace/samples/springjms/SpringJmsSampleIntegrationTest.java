package dev.millrace.samples.springjms;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jms.config.JmsListenerEndpointRegistry;
import org.springframework.jms.listener.DefaultMessageListenerContainer;

import dev.millrace.samples.testbroker.SampleBroker;

@Timeout(90)
class SpringJmsSampleIntegrationTest {

    @TempDir
    Path dataDir;

    @Test
    void shouldConfirmEveryOrderExactlyOnceThroughATransactedConcurrentListener() throws Exception {
        try (SampleBroker broker = SampleBroker.start(dataDir);
             ConfigurableApplicationContext app = new SpringApplicationBuilder(SpringJmsSample.class)
                     .run("--millrace.brokers=" + broker.bootstrap())) {
            DefaultMessageListenerContainer container = (DefaultMessageListenerContainer) app
                    .getBean(JmsListenerEndpointRegistry.class).getListenerContainer("orders");
            assertThat(container.isSessionTransacted()).isTrue();
            assertThat(container.getConcurrentConsumers()).isEqualTo(2);
            assertThat(container.getMaxConcurrentConsumers()).isEqualTo(4);

            List<String> orders = OrderClient.orders(12);
            List<String> confirmations = app.getBean(OrderClient.class)
                    .placeAndAwaitConfirmations(orders, Duration.ofSeconds(30));

            assertThat(confirmations).hasSize(orders.size());
            assertThat(confirmations.stream().map(c -> c.replaceAll("^confirmed (\\S+) .*$", "$1")))
                    .containsExactlyInAnyOrderElementsOf(orders);
            // the failed first attempt was rolled back: its order came again and only then was confirmed
            assertThat(confirmations).contains("confirmed order-3-fail-once (delivery 2)")
                    .filteredOn(c -> !c.contains("fail-once")).allMatch(c -> c.endsWith("(delivery 1)"));
            assertThat(container.getScheduledConsumerCount()).isGreaterThanOrEqualTo(2);
            assertThat(app.getBean(OrderListener.class).consumerThreads()).isNotEmpty();
        }
    }
}
