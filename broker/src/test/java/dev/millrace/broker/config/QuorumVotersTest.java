package dev.millrace.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(10)
class QuorumVotersTest {

    @Test
    void shouldParseVotersInTheOrderGiven() {
        QuorumVoters voters = QuorumVoters.parse("3@127.0.0.1:9293, 1@127.0.0.1:9093,2@localhost:9193");
        assertThat(List.copyOf(voters.nodeIds())).containsExactly(3, 1, 2);
        assertThat(voters.address(2)).isEqualTo(new HostPort("localhost", 9193));
        assertThat(voters.hostPorts()).containsEntry(1, "127.0.0.1:9093").hasSize(3);
        assertThat(voters).hasToString("3@127.0.0.1:9293,1@127.0.0.1:9093,2@localhost:9193");
        assertThat(voters.contains(4)).isFalse();
        assertThatThrownBy(() -> voters.address(4)).hasMessageContaining("node 4 is not a voter");
    }

    @Test
    void shouldDescribeTheEmbeddedVoter() {
        QuorumVoters single = QuorumVoters.single(7, "127.0.0.1", 9093);
        assertThat(single.hostPorts()).containsExactly(java.util.Map.entry(7, "127.0.0.1:9093"));
        assertThat(single).hasToString("7@127.0.0.1:9093");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "127.0.0.1:9093|entry '127.0.0.1:9093' is not id@host:port",
        "1@127.0.0.1|entry '1@127.0.0.1' is not id@host:port",
        "1@:9093|entry '1@:9093' is not id@host:port",
        "1@127.0.0.1:|entry '1@127.0.0.1:' is not id@host:port",
        "1@127.0.0.1:9093,|entry '' is not id@host:port",
        "x@127.0.0.1:9093|entry 'x@127.0.0.1:9093' has node id 'x', which is not a whole number >= 0",
        "-1@127.0.0.1:9093|entry '-1@127.0.0.1:9093' has node id '-1', which is not a whole number >= 0",
        "99999999999@h:9093|has node id '99999999999', which is not a whole number >= 0",
        "1@127.0.0.1:0|entry '1@127.0.0.1:0' has port '0', which is not 1..65535",
        "1@127.0.0.1:65536|entry '1@127.0.0.1:65536' has port '65536', which is not 1..65535",
        "1@127.0.0.1:http|has port 'http', which is not 1..65535",
        "1@127.0.0.1:9093,1@127.0.0.1:9193|entry '1@127.0.0.1:9193' repeats node id 1 (already 1@127.0.0.1:9093)",
        "1@127.0.0.1:9093,2@127.0.0.1:9093|entry '2@127.0.0.1:9093' repeats address 127.0.0.1:9093 (already node 1)",
    })
    void shouldNameTheSettingAndTheBadEntry(String value, String expected) {
        assertThatThrownBy(() -> QuorumVoters.parse(value)).isInstanceOf(ConfigurationException.class)
                .satisfies(e -> assertThat(((ConfigurationException) e).problems()).singleElement(
                        org.assertj.core.api.InstanceOfAssertFactories.STRING)
                        .startsWith("controller.quorum.voters: ").contains(expected));
    }

    @Test
    void shouldReportEveryBadEntryTogether() {
        assertThatThrownBy(() -> QuorumVoters.parse("1@a:1,b@a:2,3@a:99999"))
                .isInstanceOf(ConfigurationException.class)
                .satisfies(e -> assertThat(((ConfigurationException) e).problems()).hasSize(2));
    }
}
