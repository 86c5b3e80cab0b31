package dev.millrace.ra.inbound;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import javax.naming.NameNotFoundException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.jms.MillraceConnectionFactory;
import dev.millrace.ra.outbound.MillraceManagedConnectionFactory;
import jakarta.resource.spi.InvalidPropertyException;

/** How an activation's connectionFactoryLookup configures its connections, against a stub JNDI. */
@Timeout(20)
class ConnectionFactoryLookupTest {

    private static Map<String, Object> jndi() throws Exception {
        MillraceManagedConnectionFactory managed = new MillraceManagedConnectionFactory();
        managed.setBrokers("pooled-host:9093");
        managed.setClientId("pooled-client");
        managed.setRequestTimeoutMs(5_000);
        managed.setMaxDeliveries(4);
        MillraceConnectionFactory plain = new MillraceConnectionFactory("plain-host:9094");
        plain.setFailoverTimeoutMs(7_000);
        return Map.of("java:/jms/millrace/ConnectionFactory", managed.createConnectionFactory(),
                "java:/jms/plain", plain, "java:/jms/other", "a string");
    }

    private static EndpointActivation.Lookup lookup() throws Exception {
        Map<String, Object> bound = jndi();
        return name -> {
            Object o = bound.get(name);
            if (o == null) {
                throw new NameNotFoundException(name + " not found");
            }
            return o;
        };
    }

    private static MillraceActivationSpec spec(String connectionFactoryLookup) {
        MillraceActivationSpec spec = new MillraceActivationSpec();
        spec.setDestination("orders");
        spec.setConnectionFactoryLookup(connectionFactoryLookup);
        return spec;
    }

    private static MillraceConnectionFactory factoryOf(MillraceActivationSpec spec) throws Exception {
        return spec.connectionFactory("adapter-host:9092", EndpointActivation.connectionOptions(spec, lookup()));
    }

    @Test
    void shouldStartFromPooledFactorysOptionsButNotItsClientId() throws Exception {
        MillraceConnectionFactory f = factoryOf(spec("java:/jms/millrace/ConnectionFactory"));
        assertThat(f.getBrokers()).isEqualTo("pooled-host:9093");
        assertThat(f.getRequestTimeoutMs()).isEqualTo(5_000);
        assertThat(f.getMaxDeliveries()).isEqualTo(4);
        assertThat(f.getClientId()).isNull();
        assertThat(f.getPrefetch()).isEqualTo(10);
    }

    @Test
    void shouldLetActivationSettingsOverrideTheLookedUpFactory() throws Exception {
        MillraceActivationSpec spec = spec("java:/jms/millrace/ConnectionFactory");
        spec.setBrokers("own-host:9095");
        spec.setMaxDeliveries(7);
        spec.setClientId("own-client");
        MillraceConnectionFactory f = factoryOf(spec);
        assertThat(f.getBrokers()).isEqualTo("own-host:9095");
        assertThat(f.getMaxDeliveries()).isEqualTo(7);
        assertThat(f.getClientId()).isEqualTo("own-client");
        assertThat(f.getRequestTimeoutMs()).isEqualTo(5_000);
    }

    @Test
    void shouldTakeProviderFactoryAndUseAdaptersBrokersWithoutLookup() throws Exception {
        MillraceConnectionFactory f = factoryOf(spec("java:/jms/plain"));
        assertThat(f.getBrokers()).isEqualTo("plain-host:9094");
        assertThat(f.getFailoverTimeoutMs()).isEqualTo(7_000);
        assertThat(factoryOf(spec(null)).getBrokers()).isEqualTo("adapter-host:9092");
    }

    @Test
    void shouldNameConnectionFactoryLookupWhenNothingOrSomethingElseIsBound() {
        assertThatThrownBy(() -> factoryOf(spec("java:/jms/missing"))).isInstanceOf(InvalidPropertyException.class)
                .hasMessageStartingWith("connectionFactoryLookup: nothing bound at 'java:/jms/missing'");
        assertThatThrownBy(() -> factoryOf(spec("java:/jms/other"))).isInstanceOf(InvalidPropertyException.class)
                .hasMessage("connectionFactoryLookup: 'java:/jms/other' is a string (java.lang.String),"
                        + " not a Millrace connection factory");
    }

    /** Recovery reaches the cluster an activation's deliveries went to, a connectionFactoryLookup's included. */
    @Test
    void shouldRecoverWithTheOptionsTheActivationsConnectionsHave() throws Exception {
        Map<String, String> looked = EndpointActivation.recoveryOptions(spec("java:/jms/millrace/ConnectionFactory"),
                "adapter-host:9092", lookup());
        assertThat(looked).containsEntry("brokers", "pooled-host:9093").containsEntry("requestTimeoutMs", "5000")
                .doesNotContainKey("clientId");
        assertThat(EndpointActivation.recoveryOptions(spec(null), "adapter-host:9092", lookup()))
                .containsEntry("brokers", "adapter-host:9092");
        MillraceActivationSpec own = spec("java:/jms/plain");
        own.setBrokers("own-host:9095");
        assertThat(EndpointActivation.recoveryOptions(own, "adapter-host:9092", lookup()))
                .containsEntry("brokers", "own-host:9095").containsEntry("failoverTimeoutMs", "7000");
        assertThat(EndpointActivation.recoveryOptions(spec("java:/jms/nowhere"), "adapter-host:9092", lookup()))
                .as("a lookup the recovery thread cannot resolve: the adapter's brokers, not a failed recovery")
                .containsEntry("brokers", "adapter-host:9092");
    }
}
