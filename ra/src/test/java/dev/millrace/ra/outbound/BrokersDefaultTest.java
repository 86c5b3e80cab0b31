package dev.millrace.ra.outbound;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.ra.MillraceResourceAdapter;

/** Where an adapter and a connection factory that set no {@code brokers} take theirs from. */
@Timeout(10)
class BrokersDefaultTest {

    @Test
    void shouldTakeAdaptersBrokersWhenFactorySetsNone() {
        MillraceResourceAdapter ra = new MillraceResourceAdapter();
        ra.setBrokers("h1:9092,h2:9092");
        MillraceManagedConnectionFactory mcf = new MillraceManagedConnectionFactory();
        mcf.setResourceAdapter(ra);
        assertThat(mcf.getBrokers()).isEqualTo("h1:9092,h2:9092");
    }

    @Test
    void shouldKeepFactorysOwnBrokersWhicheverIsSetFirst() {
        MillraceResourceAdapter ra = new MillraceResourceAdapter();
        ra.setBrokers("h1:9092");
        MillraceManagedConnectionFactory before = new MillraceManagedConnectionFactory();
        before.setBrokers("own:9092");
        before.setResourceAdapter(ra);
        MillraceManagedConnectionFactory after = new MillraceManagedConnectionFactory();
        after.setResourceAdapter(ra);
        after.setBrokers("own:9092");
        assertThat(before.getBrokers()).isEqualTo("own:9092");
        assertThat(after.getBrokers()).isEqualTo("own:9092");
        assertThat(before).isEqualTo(after);
    }

    @Test
    void shouldTakeAdaptersDefaultFromSystemPropertyElseLocalhost() {
        String saved = System.getProperty(MillraceResourceAdapter.BROKERS_PROPERTY);
        try {
            System.clearProperty(MillraceResourceAdapter.BROKERS_PROPERTY);
            assertThat(new MillraceResourceAdapter().getBrokers()).isEqualTo("localhost:9092");
            System.setProperty(MillraceResourceAdapter.BROKERS_PROPERTY, "p1:19092");
            assertThat(new MillraceResourceAdapter().getBrokers()).isEqualTo("p1:19092");
        } finally {
            if (saved == null) {
                System.clearProperty(MillraceResourceAdapter.BROKERS_PROPERTY);
            } else {
                System.setProperty(MillraceResourceAdapter.BROKERS_PROPERTY, saved);
            }
        }
    }
}
