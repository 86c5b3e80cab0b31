package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData.Coordinator;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest.CoordinatorType;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * FindCoordinator over fixed leaders: each key type hashes onto its own topic's partitions and answers that
 * partition's leader; bad keys and leaderless partitions get their errors, in the batched and the single-key
 * versions (every response is serialized and parsed back at its version).
 */
@Timeout(20)
class FindCoordinatorHandlerTest {

    private static final int PARTITIONS = 5;
    private static final Node GROUP_LEADER = new Node(1, "h1", 9001);
    private static final Node TXN_LEADER = new Node(2, "h2", 9002);
    private static final Node SHARE_LEADER = new Node(3, "h3", 9003);

    /** Groups: partition 0 has no leader, every other partition is led by node 1. */
    private final FindCoordinatorHandler handler = new FindCoordinatorHandler(
            new FindCoordinatorHandler.Coordinators(PARTITIONS, p -> p == 0 ? Optional.empty()
                    : Optional.of(GROUP_LEADER)),
            new FindCoordinatorHandler.Coordinators(PARTITIONS, p -> Optional.of(TXN_LEADER)),
            new FindCoordinatorHandler.Coordinators(PARTITIONS, p -> Optional.of(SHARE_LEADER)));

    private List<Coordinator> findBatched(byte keyType, String... keys) {
        FindCoordinatorRequestData data = new FindCoordinatorRequestData().setKeyType(keyType)
                .setCoordinatorKeys(List.of(keys));
        return find(data, (short) 6).data().coordinators();
    }

    private FindCoordinatorResponse find(FindCoordinatorRequestData data, short version) {
        FindCoordinatorRequest request = new FindCoordinatorRequest.Builder(data).build(version);
        FindCoordinatorResponse response = handler.handle(request, version).join();
        return (FindCoordinatorResponse) AbstractResponse.parseResponse(ApiKeys.FIND_COORDINATOR,
                MessageUtil.toByteBufferAccessor(response.data(), version), version);
    }

    /** A group id that hashes to {@code partition}. */
    private static String keyIn(int partition, String prefix) {
        for (int i = 0; ; i++) {
            String key = prefix + i;
            if (Utils.abs(key.hashCode()) % PARTITIONS == partition) {
                return key;
            }
        }
    }

    @Test
    void shouldAnswerTheLeaderOfEachKeysPartitionPerKeyType() {
        String led = keyIn(1, "g");
        Coordinator group = findBatched(CoordinatorType.GROUP.id(), led).get(0);
        assertThat(group.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(Map.of("id", group.nodeId(), "host", group.host(), "port", group.port()))
                .isEqualTo(Map.of("id", 1, "host", "h1", "port", 9001));

        Coordinator txn = findBatched(CoordinatorType.TRANSACTION.id(), "tx-1").get(0);
        assertThat(txn.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(txn.nodeId()).isEqualTo(TXN_LEADER.id());

        Coordinator share = findBatched(CoordinatorType.SHARE.id(), "grp:" + "AAAAAAAAAAAAAAAAAAAAAA" + ":0").get(0);
        assertThat(share.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(share.nodeId()).isEqualTo(SHARE_LEADER.id());
    }

    @Test
    void shouldAnswerEveryKeyOfABatchInOrder() {
        String led = keyIn(2, "a");
        String leaderless = keyIn(0, "b");

        List<Coordinator> answers = findBatched(CoordinatorType.GROUP.id(), led, leaderless, "");

        assertThat(answers).extracting(Coordinator::key).containsExactly(led, leaderless, "");
        assertThat(answers).extracting(c -> Errors.forCode(c.errorCode()))
                .containsExactly(Errors.NONE, Errors.COORDINATOR_NOT_AVAILABLE, Errors.INVALID_REQUEST);
    }

    @Test
    void shouldAnswerCoordinatorNotAvailableWhenThePartitionHasNoLeader() {
        Coordinator none = findBatched(CoordinatorType.GROUP.id(), keyIn(0, "g")).get(0);

        assertThat(none.errorCode()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE.code());
        assertThat(none.errorMessage()).contains("no live leader");
        assertThat(none.nodeId()).isEqualTo(-1);
    }

    @Test
    void shouldRefuseAnEmptyKey() {
        Coordinator empty = findBatched(CoordinatorType.TRANSACTION.id(), "").get(0);

        assertThat(empty.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(empty.errorMessage()).contains("transaction coordinator key must not be empty");
    }

    @Test
    void shouldRefuseAnUnknownKeyType() {
        Coordinator unknown = findBatched((byte) 9, "g").get(0);

        assertThat(unknown.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(unknown.errorMessage()).contains("Unknown coordinator key type 9");
    }

    @Test
    void shouldRefuseAShareKeyWithoutGroupId() {
        List<Coordinator> answers = findBatched(CoordinatorType.SHARE.id(), "no-colon", ":topic:0");

        assertThat(answers).allSatisfy(c -> {
            assertThat(c.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
            assertThat(c.errorMessage()).contains("groupId:topicId:partition");
        });
    }

    @Test
    void shouldAnswerSingleKeyVersionsAtTheTopLevel() {
        FindCoordinatorResponse found = find(new FindCoordinatorRequestData().setKeyType(CoordinatorType.GROUP.id())
                .setKey(keyIn(3, "g")), (short) 3);
        assertThat(found.error()).isEqualTo(Errors.NONE);
        assertThat(found.node().id()).isEqualTo(GROUP_LEADER.id());
        assertThat(found.node().port()).isEqualTo(GROUP_LEADER.port());

        FindCoordinatorResponse none = find(new FindCoordinatorRequestData().setKeyType(CoordinatorType.GROUP.id())
                .setKey(keyIn(0, "g")), (short) 3);
        assertThat(none.error()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);

        FindCoordinatorResponse empty = find(new FindCoordinatorRequestData().setKeyType(CoordinatorType.GROUP.id())
                .setKey(""), (short) 0);
        assertThat(empty.error()).isEqualTo(Errors.INVALID_REQUEST);
    }
}
