package dev.millrace.samples.springjms;

import java.time.Duration;
import java.util.List;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Spring Boot with {@code JmsTemplate} and {@code @JmsListener} on Millrace. {@link JmsConfiguration} builds the
 * ConnectionFactory from the {@code millrace.*} application properties; {@link OrderListener} confirms orders in a
 * transacted listener container with concurrency {@code 2-4}; {@link OrderClient} sends orders and collects the
 * confirmations. The program places {@code orders.count} orders, prints the confirmations and exits (status 1 if
 * some did not come back within {@code orders.timeout}).
 *
 * <pre>
 *   java -jar samples/spring-jms/target/millrace-sample-spring-jms.jar [--millrace.brokers=host:port]
 * </pre>
 */
@SpringBootApplication
public class SpringJmsSample {

    public static void main(String[] args) {
        ConfigurableApplicationContext context = SpringApplication.run(SpringJmsSample.class, args);
        int status;
        try {
            OrderClient client = context.getBean(OrderClient.class);
            int count = context.getEnvironment().getProperty("orders.count", Integer.class, 10);
            Duration timeout = context.getEnvironment().getProperty("orders.timeout", Duration.class,
                    Duration.ofSeconds(30));
            List<String> orders = OrderClient.orders(count);
            List<String> confirmations = client.placeAndAwaitConfirmations(orders, timeout);
            confirmations.forEach(System.out::println);
            boolean ok = confirmations.size() == orders.size();
            System.out.println("spring JMS sample: " + (ok ? "OK" : "FAILED") + ", " + confirmations.size() + " of "
                    + orders.size() + " orders confirmed");
            status = ok ? 0 : 1;
        } finally {
            context.close();
        }
        System.exit(status);
    }
}
