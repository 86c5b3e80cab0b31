package dev.millrace.ra.inbound;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.beans.PropertyDescriptor;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

import org.hibernate.validator.messageinterpolation.ParameterMessageInterpolator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import jakarta.resource.spi.InvalidPropertyException;
import jakarta.validation.Validation;
import jakarta.validation.Validator;

@Timeout(20)
class MillraceActivationSpecTest {

    private static final Validator VALIDATOR = Validation.byDefaultProvider().configure()
            .messageInterpolator(new ParameterMessageInterpolator()).buildValidatorFactory().getValidator();

    private static MillraceActivationSpec queue(String name) {
        MillraceActivationSpec spec = new MillraceActivationSpec();
        spec.setDestination(name);
        return spec;
    }

    private static Set<String> violations(MillraceActivationSpec spec) {
        return VALIDATOR.validate(spec).stream().map(v -> v.getPropertyPath() + ": " + v.getMessage())
                .collect(Collectors.toSet());
    }

    @Test
    void shouldAcceptQueueWithDefaults() throws Exception {
        MillraceActivationSpec spec = queue("orders");
        assertThat(violations(spec)).isEmpty();
        spec.validate();
        assertThat(spec.getMaxSession()).isEqualTo(15);
        assertThat(spec.getDestinationType()).isEqualTo(MillraceActivationSpec.QUEUE);
    }

    @Test
    void shouldNameDestinationTypeWhenItIsUnknown() {
        MillraceActivationSpec spec = queue("orders");
        spec.setDestinationType("jakarta.jms.Bogus");
        assertThat(violations(spec)).containsExactly(
                "destinationType: destinationType must be jakarta.jms.Queue or jakarta.jms.Topic");
        assertInvalid(spec, "destinationType");
    }

    @Test
    void shouldNameMaxSessionWhenItIsNegative() {
        MillraceActivationSpec spec = queue("orders");
        spec.setMaxSession(-1);
        assertThat(violations(spec)).containsExactly("maxSession: maxSession must be at least 1");
        assertInvalid(spec, "maxSession");
    }

    @Test
    void shouldNameEveryProblemAtOnce() {
        MillraceActivationSpec spec = new MillraceActivationSpec();
        spec.setDestinationType(MillraceActivationSpec.TOPIC);
        spec.setSubscriptionDurability("Durable");
        spec.setAcknowledgeMode("Client-acknowledge");
        spec.setMaxDeliveries(0);
        assertThat(violations(spec)).hasSize(4);
        assertInvalid(spec, "destination", "subscriptionName", "acknowledgeMode", "maxDeliveries");
    }

    @Test
    void shouldNameMessageSelectorWhenItDoesNotCompile() {
        MillraceActivationSpec spec = queue("orders");
        spec.setMessageSelector("kind = 'a' AND");
        assertInvalid(spec, "messageSelector");
        spec.setMessageSelector("kind = 'a'");
        assertThat(violations(spec)).isEmpty();
    }

    @Test
    void shouldNameBrokersWhenTheyAreNotHostAndPort() {
        MillraceActivationSpec spec = queue("orders");
        spec.setBrokers("nowhere");
        assertThatThrownBy(spec::validate).isInstanceOf(InvalidPropertyException.class)
                .hasMessageContaining("'nowhere'").hasMessageContaining("host:port");
    }

    @Test
    void shouldCarrySettingsIntoTheConnectionFactory() {
        MillraceActivationSpec spec = queue("orders");
        spec.setMaxDeliveries(3);
        spec.setRedeliveryDelayMs(50L);
        spec.setPrefetch(1);
        var factory = spec.connectionFactory("127.0.0.1:1234");
        assertThat(factory.getBrokers()).isEqualTo("127.0.0.1:1234");
        assertThat(factory.getMaxDeliveries()).isEqualTo(3);
        assertThat(factory.getRedeliveryDelayMs()).isEqualTo(50L);
        assertThat(factory.getPrefetch()).isEqualTo(1);
        spec.setBrokers("10.0.0.1:9092");
        assertThat(spec.connectionFactory("127.0.0.1:1234").getBrokers()).isEqualTo("10.0.0.1:9092");
    }

    private static void assertInvalid(MillraceActivationSpec spec, String... properties) {
        assertThatThrownBy(spec::validate).isInstanceOfSatisfying(InvalidPropertyException.class, e -> {
            for (String p : properties) {
                assertThat(e.getMessage()).contains(p);
            }
            PropertyDescriptor[] invalid = e.getInvalidPropertyDescriptors();
            assertThat(Arrays.stream(invalid).map(PropertyDescriptor::getName))
                    .containsExactlyInAnyOrder(properties);
        });
    }

}
