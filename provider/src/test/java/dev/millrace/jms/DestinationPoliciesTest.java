package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import jakarta.jms.JMSException;

/** Redelivery and expiry policies: defaults, per-destination entries and their precedence, validation. */
@Timeout(10)
class DestinationPoliciesTest {

    private static DestinationPolicies policies(String spec) {
        return new DestinationPolicies(10, 0, 60_000, "{destination}.DLQ", "", spec);
    }

    @Test
    void shouldApplyTheFactoryDefaultsAndTheDeadLetterPattern() {
        DestinationPolicies.Policy p = policies("").policyFor("orders");

        assertThat(p).isEqualTo(new DestinationPolicies.Policy(10, 0, 60_000, "orders.DLQ", null));
        assertThat(policies("").policyFor("orders.DLQ").deadLetterQueue()).as("no DLQ of a DLQ").isNull();
    }

    @Test
    void shouldPreferAnExactEntryThenTheLongestPrefix() {
        DestinationPolicies p = policies("orders*:maxDeliveries=4;orders.eu*:maxDeliveries=3,expiryQueue=eu.expired;"
                + "orders.eu.vip:maxDeliveries=2,deadLetterQueue=,redeliveryDelayMs=100,maxRedeliveryDelayMs=100");

        assertThat(p.policyFor("orders.us").maxDeliveries()).isEqualTo(4);
        assertThat(p.policyFor("orders.eu.fr")).isEqualTo(new DestinationPolicies.Policy(3, 0, 60_000,
                "orders.eu.fr.DLQ", "eu.expired"));
        assertThat(p.policyFor("orders.eu.vip")).isEqualTo(new DestinationPolicies.Policy(2, 100, 100, null, null));
        assertThat(p.policyFor("payments").maxDeliveries()).isEqualTo(10);
    }

    @Test
    void shouldRejectMalformedOrInconsistentPoliciesNamingTheProblem() {
        assertThatThrownBy(() -> policies("orders:maxDeliveries")).hasMessageContaining("entry orders")
                .hasMessageContaining("not key=value");
        assertThatThrownBy(() -> policies("orders:retries=3")).hasMessageContaining("retries");
        assertThatThrownBy(() -> policies("orders:maxDeliveries=0")).hasMessageContaining("maxDeliveries must be 1..");
        assertThatThrownBy(() -> policies("orders:redeliveryDelayMs=70000"))
                .hasMessageContaining("entry orders: maxRedeliveryDelayMs (60000) must be at least redeliveryDelayMs");
        assertThatThrownBy(() -> policies("a:maxDeliveries=1;a:maxDeliveries=2")).hasMessageContaining("twice");
        assertThatThrownBy(() -> new DestinationPolicies(10, 0, 1, "dead", "", ""))
                .hasMessageContaining("deadLetterQueuePattern must contain {destination}");
    }

    @Test
    void shouldValidateFactoryOptionsBySettingAndAtConnectionCreation() {
        MillraceConnectionFactory f = new MillraceConnectionFactory("127.0.0.1:1");
        assertThat(f.getProperties()).containsEntry("maxDeliveries", "10")
                .containsEntry("deadLetterQueuePattern", "{destination}.DLQ");
        f.setProperties(Map.of("redeliveryDelayMs", "5000", "maxDeliveries", "3"));
        assertThat(f.getRedeliveryDelayMs()).isEqualTo(5000);
        assertThatThrownBy(() -> f.setProperties(Map.of("maxDeliveries", "0")))
                .hasMessageContaining("maxDeliveries");
        assertThatThrownBy(() -> f.setDestinationPolicies("orders:bogus=1")).hasMessageContaining("bogus");
        f.setRedeliveryDelayMs(120_000);
        assertThatThrownBy(f::createConnection).isInstanceOf(JMSException.class)
                .hasMessageContaining("maxRedeliveryDelayMs (60000) must be at least redeliveryDelayMs (120000)");
    }
}
