package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Hashtable;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.jms.jndi.ConnectionFactoryObjectFactory;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.XAConnectionFactory;

/** The XA connection factory through JNDI: its own entries, and its reference restoring an XA factory. */
@Timeout(10)
class MillraceXAConnectionFactoryTest {

    @Test
    void shouldRestoreAnXaFactoryWithEveryOptionFromItsReference() throws Exception {
        MillraceXAConnectionFactory f = new MillraceXAConnectionFactory("h1:1,h2:2");
        f.setPrefetch(3);
        f.setTransactionTimeoutMs(5000);
        Object restored = new ConnectionFactoryObjectFactory().getObjectInstance(f.getReference(), null, null,
                new Hashtable<>());
        assertThat(restored).isInstanceOf(MillraceXAConnectionFactory.class);
        assertThat(((MillraceXAConnectionFactory) restored).getProperties()).isEqualTo(f.getProperties())
                .containsEntry("prefetch", "3").containsEntry("transactionTimeoutMs", "5000");
        assertThat(f.toString()).startsWith("MillraceXAConnectionFactory").doesNotContain("password");
    }

    @Test
    void shouldBindXaConnectionFactoryEntriesBesideThePlainDefault() throws Exception {
        Hashtable<String, Object> env = new Hashtable<>();
        env.put("java.naming.factory.initial", "dev.millrace.jms.jndi.MillraceInitialContextFactory");
        env.put("xaConnectionFactory.xacf", "h1:1,h2:2?prefetch=7");
        javax.naming.Context context = new javax.naming.InitialContext(env);
        try {
            Object xa = context.lookup("xacf");
            assertThat(xa).isInstanceOf(XAConnectionFactory.class);
            assertThat(((MillraceXAConnectionFactory) xa).getPrefetch()).isEqualTo(7);
            assertThat(((MillraceXAConnectionFactory) xa).getBrokers()).isEqualTo("h1:1,h2:2");
            Object plain = context.lookup("ConnectionFactory");
            assertThat(plain).isInstanceOf(ConnectionFactory.class).isNotInstanceOf(XAConnectionFactory.class);
        } finally {
            context.close();
        }
    }
}
