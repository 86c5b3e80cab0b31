package dev.millrace.ra.inbound;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import javax.naming.NameNotFoundException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.jms.MillraceQueue;
import dev.millrace.jms.MillraceTopic;
import dev.millrace.ra.admin.MillraceQueueAdminObject;
import dev.millrace.ra.admin.MillraceTopicAdminObject;
import jakarta.resource.spi.InvalidPropertyException;

/** How an activation's destinationLookup resolves, against a stub JNDI. */
@Timeout(20)
class DestinationLookupTest {

    private static final Map<String, Object> JNDI = Map.of(
            "java:/jms/queue/orders", adminQueue("orders"),
            "java:/jms/topic/prices", adminTopic("prices"),
            "java:/jms/queue/unnamed", new MillraceQueueAdminObject(),
            "java:/jms/other", "a string");

    private static EndpointActivation.Lookup jndi() {
        return name -> {
            Object o = JNDI.get(name);
            if (o == null) {
                throw new NameNotFoundException(name + " not found");
            }
            return o;
        };
    }

    private static MillraceQueueAdminObject adminQueue(String name) {
        MillraceQueueAdminObject q = new MillraceQueueAdminObject();
        q.setName(name);
        return q;
    }

    private static MillraceTopicAdminObject adminTopic(String name) {
        MillraceTopicAdminObject t = new MillraceTopicAdminObject();
        t.setName(name);
        return t;
    }

    private static MillraceActivationSpec lookup(String name, String type) {
        MillraceActivationSpec spec = new MillraceActivationSpec();
        spec.setDestinationLookup(name);
        spec.setDestinationType(type);
        return spec;
    }

    @Test
    void shouldResolveAdminObjectsToTheDestinationsOfTheirNames() throws Exception {
        assertThat(EndpointActivation.destination(lookup("java:/jms/queue/orders", MillraceActivationSpec.QUEUE),
                jndi())).isEqualTo(new MillraceQueue("orders"));
        assertThat(EndpointActivation.destination(lookup("java:/jms/topic/prices", MillraceActivationSpec.TOPIC),
                jndi())).isEqualTo(new MillraceTopic("prices"));
    }

    @Test
    void shouldNameDestinationLookupAndItsNameWhenNothingIsBound() {
        assertThatThrownBy(() -> EndpointActivation.destination(lookup("java:/jms/queue/missing",
                MillraceActivationSpec.QUEUE), jndi())).isInstanceOf(InvalidPropertyException.class)
                .hasMessageStartingWith("destinationLookup: nothing bound at 'java:/jms/queue/missing'");
    }

    @Test
    void shouldNameDestinationLookupWhenBoundObjectIsNotOfDestinationType() {
        assertThatThrownBy(() -> EndpointActivation.destination(lookup("java:/jms/topic/prices",
                MillraceActivationSpec.QUEUE), jndi())).isInstanceOf(InvalidPropertyException.class)
                .hasMessage("destinationLookup: 'java:/jms/topic/prices' is topic://prices"
                        + " (dev.millrace.ra.admin.MillraceTopicAdminObject), not a jakarta.jms.Queue (destinationType)");
        assertThatThrownBy(() -> EndpointActivation.destination(lookup("java:/jms/other",
                MillraceActivationSpec.QUEUE), jndi())).isInstanceOf(InvalidPropertyException.class)
                .hasMessageStartingWith("destinationLookup: 'java:/jms/other' is a string");
    }

    @Test
    void shouldNameDestinationLookupWhenAdminObjectHasNoName() {
        assertThatThrownBy(() -> EndpointActivation.destination(lookup("java:/jms/queue/unnamed",
                MillraceActivationSpec.QUEUE), jndi())).isInstanceOf(InvalidPropertyException.class)
                .hasMessageStartingWith("destinationLookup: 'java:/jms/queue/unnamed' is not a Millrace destination")
                .hasMessageContaining("has no name");
    }
}
