package dev.millrace.samples.springjms;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jms.annotation.EnableJms;
import org.springframework.jms.config.DefaultJmsListenerContainerFactory;
import org.springframework.jms.connection.CachingConnectionFactory;
import org.springframework.jms.core.JmsTemplate;

import dev.millrace.jms.MillraceConnectionFactory;

/**
 * The JMS wiring of the sample.
 *
 * <ul>
 *   <li>{@code millraceConnectionFactory}: a {@link MillraceConnectionFactory} whose options are bound from the
 *       {@code millrace.*} properties by their JavaBean names ({@code millrace.brokers}, {@code millrace.prefetch},
 *       {@code millrace.request-timeout-ms}, ... see provider/README.md);</li>
 *   <li>{@code connectionFactory}: the same wrapped in Spring's {@link CachingConnectionFactory} for
 *       {@link JmsTemplate}, so that sends and receives reuse one connection and its sessions, producers and
 *       consumers instead of opening a connection per call;</li>
 *   <li>{@code jmsListenerContainerFactory}: the listener containers get the plain Millrace factory (Spring advises
 *       against a caching factory under a container that scales its consumers), with transacted sessions (the receipt
 *       of a message and the reply a listener returns commit together, or roll back together when the listener
 *       throws) and the concurrency of {@code orders.listener.concurrency}.</li>
 * </ul>
 *
 * <p>The beans are thread-safe; the listener runs on the containers' consumer threads.
 */
@Configuration(proxyBeanMethods = false)
@EnableJms
class JmsConfiguration {

    private static final Logger LOG = LoggerFactory.getLogger(JmsConfiguration.class);

    @Bean
    @ConfigurationProperties("millrace")
    MillraceConnectionFactory millraceConnectionFactory() {
        return new MillraceConnectionFactory();
    }

    @Bean
    @Primary
    CachingConnectionFactory connectionFactory(MillraceConnectionFactory millrace) {
        CachingConnectionFactory caching = new CachingConnectionFactory(millrace);
        caching.setCacheConsumers(true); // JmsTemplate.receive keeps one queue consumer instead of one per call
        return caching;
    }

    @Bean
    JmsTemplate jmsTemplate(CachingConnectionFactory connectionFactory) {
        return new JmsTemplate(connectionFactory);
    }

    @Bean
    DefaultJmsListenerContainerFactory jmsListenerContainerFactory(MillraceConnectionFactory millrace,
            @Value("${orders.listener.concurrency}") String concurrency) {
        DefaultJmsListenerContainerFactory factory = new DefaultJmsListenerContainerFactory();
        factory.setConnectionFactory(millrace);
        factory.setSessionTransacted(true);
        factory.setConcurrency(concurrency);
        factory.setReceiveTimeout(1000L);
        // one line instead of the container's stack trace; the container has rolled the session back already
        factory.setErrorHandler(failure -> LOG.warn("listener failed, its transaction is rolled back: {}",
                failure.getCause() == null ? failure.toString() : failure.getCause().getMessage()));
        return factory;
    }
}
