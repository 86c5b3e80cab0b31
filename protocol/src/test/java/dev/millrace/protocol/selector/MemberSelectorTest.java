package dev.millrace.protocol.selector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The RackId convention that carries a member's selector. */
@Timeout(10)
class MemberSelectorTest {

    @Test
    void shouldRoundTripASelectorThroughTheRackId() {
        String rack = MemberSelector.encode("color = 'blue'");

        assertThat(rack).isEqualTo("millrace.selector:color = 'blue'");
        assertThat(MemberSelector.carriesSelector(rack)).isTrue();
        assertThat(MemberSelector.decode(rack)).contains("color = 'blue'");
        assertThat(MemberSelector.compile(rack).text()).isEqualTo("color = 'blue'");
    }

    @Test
    void shouldTreatOrdinaryRackIdsAndBlankSelectorsAsNoSelector() {
        assertThat(MemberSelector.encode(null)).isNull();
        assertThat(MemberSelector.encode("  ")).isNull();
        assertThat(MemberSelector.decode("eu-west-1a")).isEmpty();
        assertThat(MemberSelector.decode(null)).isEmpty();
        assertThat(MemberSelector.compile("eu-west-1a")).isNull();
        assertThat(MemberSelector.compile(null)).isNull();
        assertThat(MemberSelector.compile("millrace.selector:   ")).isNull();
    }

    @Test
    void shouldReportPositionsWithinTheSelectorNotTheRackId() {
        SelectorSyntaxException e = catchThrowableOfType(
                () -> MemberSelector.compile("millrace.selector:a = = 1"), SelectorSyntaxException.class);

        assertThat(e.position()).isEqualTo(4);
        assertThat(e.token()).isEqualTo("=");
    }

    @Test
    void shouldMarkASubscriptionSelectorThatArchivesWhatItDoesNotMatch() {
        String rack = MemberSelector.encodeSubscription("color = 'blue'");

        assertThat(rack).isEqualTo("millrace.subscription.selector:color = 'blue'");
        assertThat(MemberSelector.archivesUnmatched(rack)).isTrue();
        assertThat(MemberSelector.archivesUnmatched(MemberSelector.encode("color = 'blue'"))).isFalse();
        assertThat(MemberSelector.compile(rack).text()).isEqualTo("color = 'blue'");
    }
}
