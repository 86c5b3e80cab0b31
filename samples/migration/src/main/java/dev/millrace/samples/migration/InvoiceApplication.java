package dev.millrace.samples.migration;

import java.time.Duration;
import java.util.List;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jms.connection.CachingConnectionFactory;

import jakarta.jms.ConnectionFactory;

/**
 * An ordinary Spring Boot JMS application, written for ActiveMQ Artemis: it sends invoices with {@code JmsTemplate}
 * ({@link InvoiceSender}) and books them in a transacted {@code @JmsListener} ({@link InvoiceListener}). Nothing in
 * these classes names a broker. The ConnectionFactory comes from configuration: profile {@code artemis} sets
 * {@code spring.artemis.*} for Boot's Artemis auto-configuration, profile {@code millrace} sets
 * {@code millrace.brokers} for {@code MillraceJmsAutoConfiguration}, which then provides the ConnectionFactory and
 * Artemis's backs off.
 *
 * <pre>
 *   java -jar samples/migration/target/millrace-sample-migration.jar --spring.profiles.active=millrace
 *   java -jar samples/migration/target/millrace-sample-migration.jar --spring.profiles.active=artemis
 * </pre>
 */
@SpringBootApplication
public class InvoiceApplication {

    public static void main(String[] args) {
        ConfigurableApplicationContext context = SpringApplication.run(InvoiceApplication.class, args);
        int status;
        try {
            int count = context.getEnvironment().getProperty("invoices.count", Integer.class, 5);
            System.out.println("JMS connection factory: " + describe(context.getBean(ConnectionFactory.class)));
            List<String> booked = context.getBean(InvoiceSender.class).sendAndAwaitBooking(count,
                    Duration.ofSeconds(30));
            booked.forEach(invoice -> System.out.println("booked " + invoice));
            boolean ok = booked.size() == count;
            System.out.println("migration sample: " + (ok ? "OK" : "FAILED") + ", " + booked.size() + " of " + count
                    + " invoices booked");
            status = ok ? 0 : 1;
        } finally {
            context.close();
        }
        System.exit(status);
    }

    /** The class of the broker's own factory behind Spring's caching wrapper. */
    static String describe(ConnectionFactory factory) {
        ConnectionFactory target = factory instanceof CachingConnectionFactory caching
                ? caching.getTargetConnectionFactory() : factory;
        return target == null ? "none" : target.getClass().getName();
    }
}
