package dev.millrace.samples.migration.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.jms.JmsAutoConfiguration;
import org.springframework.boot.autoconfigure.jms.JmsProperties;
import org.springframework.boot.autoconfigure.jms.artemis.ArtemisAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.jms.connection.CachingConnectionFactory;

import dev.millrace.jms.MillraceConnectionFactory;
import jakarta.jms.ConnectionFactory;

/**
 * Spring Boot auto-configuration of a Millrace ConnectionFactory, active when the property {@code millrace.brokers}
 * is set and the application defines no ConnectionFactory of its own. Every {@code millrace.*} property is bound
 * onto {@link MillraceConnectionFactory} by its JavaBean name ({@code millrace.prefetch},
 * {@code millrace.request-timeout-ms}, ...; see provider/README.md). As Boot does for Artemis, the factory is wrapped
 * in Spring's {@link CachingConnectionFactory} per {@code spring.jms.cache.*} (on by default: one connection, cached
 * sessions and producers, consumers not cached), so {@code JmsTemplate} does not open a connection per send. It runs
 * before Boot's Artemis auto-configuration, which then finds a ConnectionFactory and backs off; Boot's
 * {@link JmsAutoConfiguration} builds {@code JmsTemplate} and the listener container factory on it from
 * {@code spring.jms.*} as for any broker.
 *
 * <p>Application code does not see this class: it is listed in
 * {@code META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports}, as a starter's would be.
 * The factory it returns is thread-safe, as JMS connection factories are.
 */
@AutoConfiguration(before = {ArtemisAutoConfiguration.class, JmsAutoConfiguration.class})
@ConditionalOnClass({MillraceConnectionFactory.class, CachingConnectionFactory.class})
@ConditionalOnProperty(prefix = "millrace", name = "brokers")
@ConditionalOnMissingBean(ConnectionFactory.class)
@EnableConfigurationProperties(JmsProperties.class)
public class MillraceJmsAutoConfiguration {

    @Bean
    ConnectionFactory jmsConnectionFactory(Environment environment, JmsProperties jms) {
        MillraceConnectionFactory millrace = Binder.get(environment)
                .bind("millrace", Bindable.ofInstance(new MillraceConnectionFactory()))
                .orElseThrow(() -> new IllegalStateException("no millrace.* properties"));
        JmsProperties.Cache cache = jms.getCache();
        if (!cache.isEnabled()) {
            return millrace;
        }
        CachingConnectionFactory caching = new CachingConnectionFactory(millrace);
        caching.setCacheConsumers(cache.isConsumers());
        caching.setCacheProducers(cache.isProducers());
        caching.setSessionCacheSize(cache.getSessionCacheSize());
        return caching;
    }
}
