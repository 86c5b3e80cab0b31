package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Hashtable;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.jms.jndi.ConnectionFactoryObjectFactory;

/** Options of the connection factory: defaults, validation, by-name setting and the JNDI reference round trip. */
@Timeout(10)
class MillraceConnectionFactoryTest {

    @Test
    void shouldRestoreEveryOptionFromItsReference() throws Exception {
        MillraceConnectionFactory f = new MillraceConnectionFactory("h1:1,h2:2");
        f.setPrefetch(3);
        f.setPersistentAcks("1");
        f.setAutoCreateDestinations(false);
        Object restored = new ConnectionFactoryObjectFactory().getObjectInstance(f.getReference(), null, null,
                new Hashtable<>());
        assertThat(((MillraceConnectionFactory) restored).getProperties()).isEqualTo(f.getProperties())
                .containsEntry("prefetch", "3").containsEntry("autoCreateDestinations", "false");
    }

    @Test
    void shouldRejectUnknownOptionsAndBadValuesNamingThem() {
        MillraceConnectionFactory f = new MillraceConnectionFactory();
        assertThat(f.getBrokers()).isEqualTo("localhost:9092");
        assertThatThrownBy(() -> f.setProperties(Map.of("prefetchh", "1")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("prefetchh");
        assertThatThrownBy(() -> f.setProperties(Map.of("prefetch", "0")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("prefetch");
        assertThatThrownBy(() -> new MillraceConnectionFactory("nohostport"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nohostport");
    }

    @Test
    void shouldTakeTheFailoverWindowAsPropertyByNameAndInAJndiUrlAndRejectBadValuesNamingIt() throws Exception {
        MillraceConnectionFactory f = new MillraceConnectionFactory("h1:1");
        assertThat(f.getFailoverTimeoutMs()).isEqualTo(30_000);
        f.setProperties(Map.of("failoverTimeoutMs", "0"));
        assertThat(f.getFailoverTimeoutMs()).isZero();
        assertThatThrownBy(() -> f.setFailoverTimeoutMs(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("failoverTimeoutMs");
        assertThatThrownBy(() -> f.setProperties(Map.of("failoverTimeoutMs", "soon")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("failoverTimeoutMs");
        Hashtable<String, Object> env = new Hashtable<>();
        env.put("java.naming.factory.initial", "dev.millrace.jms.jndi.MillraceInitialContextFactory");
        env.put("connectionFactory.cf", "h1:1,h2:2?failoverTimeoutMs=5000");
        javax.naming.Context context = new javax.naming.InitialContext(env);
        try {
            assertThat(((MillraceConnectionFactory) context.lookup("cf")).getFailoverTimeoutMs()).isEqualTo(5000);
        } finally {
            context.close();
        }
        env.put("connectionFactory.cf", "h1:1?failoverTimeoutMs=-5");
        assertThatThrownBy(() -> new javax.naming.InitialContext(env).lookup("cf"))
                .hasStackTraceContaining("failoverTimeoutMs");
    }
}
