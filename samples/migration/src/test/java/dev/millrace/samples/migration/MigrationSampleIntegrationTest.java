package dev.millrace.samples.migration;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.apache.activemq.artemis.core.config.impl.ConfigurationImpl;
import org.apache.activemq.artemis.core.server.embedded.EmbeddedActiveMQ;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jms.config.JmsListenerEndpointRegistry;
import org.springframework.jms.listener.DefaultMessageListenerContainer;

import dev.millrace.samples.testbroker.SampleBroker;
import jakarta.jms.ConnectionFactory;

/** The same application classes, run once per broker; only the profile and the broker address differ. */
@Timeout(90)
class MigrationSampleIntegrationTest {

    @TempDir
    Path dataDir;

    @Test
    void shouldBookEveryInvoiceOnActiveMqArtemis() throws Exception {
        int port = freePort();
        EmbeddedActiveMQ artemis = new EmbeddedActiveMQ().setConfiguration(new ConfigurationImpl()
                .setName("migration-test").setPersistenceEnabled(false).setSecurityEnabled(false)
                .setJMXManagementEnabled(false).addAcceptorConfiguration("core",
                        "tcp://127.0.0.1:" + port + "?protocols=CORE"));
        artemis.start();
        try {
            assertApplicationBooksInvoices("org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory",
                    "--spring.profiles.active=artemis", "--spring.artemis.broker-url=tcp://127.0.0.1:" + port);
        } finally {
            artemis.stop();
        }
    }

    @Test
    void shouldBookEveryInvoiceOnMillrace() throws Exception {
        try (SampleBroker broker = SampleBroker.start(dataDir)) {
            assertApplicationBooksInvoices("dev.millrace.jms.MillraceConnectionFactory",
                    "--spring.profiles.active=millrace", "--millrace.brokers=" + broker.bootstrap());
        }
    }

    private static void assertApplicationBooksInvoices(String expectedFactory, String... args) {
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(InvoiceApplication.class).run(args)) {
            assertThat(InvoiceApplication.describe(app.getBean(ConnectionFactory.class))).isEqualTo(expectedFactory);
            // spring.jms.listener.* reached the container on either broker
            DefaultMessageListenerContainer container = (DefaultMessageListenerContainer) app
                    .getBean(JmsListenerEndpointRegistry.class).getListenerContainers().iterator().next();
            assertThat(container.isSessionTransacted()).isTrue();
            assertThat(container.getMaxConcurrentConsumers()).isEqualTo(2);

            List<String> booked = app.getBean(InvoiceSender.class).sendAndAwaitBooking(8, Duration.ofSeconds(30));

            assertThat(booked).hasSize(8).doesNotHaveDuplicates()
                    .allMatch(invoice -> invoice.matches("invoice-\\w+-[1-8]"));
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
