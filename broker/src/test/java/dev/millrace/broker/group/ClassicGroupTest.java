package dev.millrace.broker.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.IllegalGenerationException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class ClassicGroupTest {

    private static GroupMember member(String id, String instanceId, String... protocols) {
        List<GroupMember.Protocol> list = java.util.Arrays.stream(protocols)
                .map(p -> new GroupMember.Protocol(p, new byte[] {1})).toList();
        return new GroupMember(id, instanceId, "client", "/host", 10_000, 30_000, list);
    }

    @Test
    void shouldThrowNamingBothStatesOnIllegalTransition() {
        ClassicGroup group = new ClassicGroup("g", 0);

        assertThatThrownBy(() -> group.transitionToStable(1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Empty").hasMessageContaining("Stable").hasMessageContaining("g");
        group.transitionToPreparingRebalance(1);
        assertThatThrownBy(() -> group.transitionToPreparingRebalance(2)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("PreparingRebalance to PreparingRebalance");
        group.transitionToDead(3);
        assertThatThrownBy(() -> group.transitionToEmpty(4)).hasMessageContaining("Dead to Empty");
    }

    @Test
    void shouldAdvanceGenerationSelectProtocolAndKeepLeader() {
        ClassicGroup group = new ClassicGroup("g", 0);
        group.addMember(member("a", null, "range", "roundrobin"), "consumer");
        group.addMember(member("b", null, "roundrobin", "range"), "consumer");
        group.addMember(member("c", null, "roundrobin", "range", "sticky"), "consumer");
        group.transitionToPreparingRebalance(1);

        group.initNextGeneration(2);

        assertThat(group.state()).isEqualTo(GroupState.COMPLETING_REBALANCE);
        assertThat(group.generationId()).isEqualTo(1);
        assertThat(group.protocolName()).isEqualTo("roundrobin");
        assertThat(group.leaderId()).isEqualTo("a");
        assertThat(group.pendingSyncMembers()).containsExactly("a", "b", "c");
    }

    @Test
    void shouldPassLeadershipOnWhenLeaderLeavesAndEmptyWithoutMembers() {
        ClassicGroup group = new ClassicGroup("g", 0);
        GroupMember a = member("a", null, "range");
        group.addMember(a, "consumer");
        group.addMember(member("b", null, "range"), "consumer");

        group.removeMember(a);
        assertThat(group.leaderId()).isEqualTo("b");
        group.removeMember(group.member("b"));
        assertThat(group.leaderId()).isNull();

        group.transitionToPreparingRebalance(1);
        group.initNextGeneration(2);
        assertThat(group.state()).isEqualTo(GroupState.EMPTY);
        assertThat(group.protocolName()).isNull();
        assertThat(group.protocolType()).isEqualTo("consumer");
    }

    @Test
    void shouldCheckProtocolCompatibility() {
        ClassicGroup group = new ClassicGroup("g", 0);
        assertThat(group.supportsProtocols("consumer", List.of("range"), null)).isTrue();
        assertThat(group.supportsProtocols("", List.of("range"), null)).isFalse();
        group.addMember(member("a", null, "range", "roundrobin"), "consumer");

        assertThat(group.supportsProtocols("consumer", List.of("sticky", "roundrobin"), null)).isTrue();
        assertThat(group.supportsProtocols("consumer", List.of("sticky"), null)).isFalse();
        assertThat(group.supportsProtocols("connect", List.of("range"), null)).isFalse();
        assertThat(group.supportsProtocols("consumer", List.of("sticky"), "a")).isTrue();
    }

    @Test
    void shouldValidateMembersAndGenerations() {
        ClassicGroup group = new ClassicGroup("g", 0);
        group.addMember(member("static-1", "instance", "range"), "consumer");

        assertThat(group.validateMember("static-1", "instance", "op").memberId()).isEqualTo("static-1");
        assertThatThrownBy(() -> group.validateMember("other", "instance", "op"))
                .isInstanceOf(FencedInstanceIdException.class).hasMessageContaining("static-1");
        assertThatThrownBy(() -> group.validateMember("x", "unknown-instance", "op"))
                .isInstanceOf(UnknownMemberIdException.class);
        assertThatThrownBy(() -> group.validateMember("x", null, "Heartbeat"))
                .isInstanceOf(UnknownMemberIdException.class).hasMessageContaining("x").hasMessageContaining("g");
        assertThatThrownBy(() -> group.validateGeneration(4, "static-1", "SyncGroup"))
                .isInstanceOf(IllegalGenerationException.class).hasMessageContaining("generation 4")
                .hasMessageContaining("generation 0");
    }
}
