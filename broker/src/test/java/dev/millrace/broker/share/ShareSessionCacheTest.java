package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Share-session epochs and incremental partition lists. */
@Timeout(10)
class ShareSessionCacheTest {

    private static final Uuid ID = Uuid.randomUuid();
    private static final TopicIdPartition P0 = new TopicIdPartition(ID, 0, "queue");
    private static final TopicIdPartition P1 = new TopicIdPartition(ID, 1, "queue");

    private final ShareSessionCache cache = new ShareSessionCache();

    @Test
    void shouldKeepPartitionsAcrossIncrementalRequests() {
        cache.update("g", "m", 0, List.of(P0), List.of());
        cache.update("g", "m", 1, List.of(P1), List.of());

        ShareSessionCache.Result third = cache.update("g", "m", 2, List.of(), List.of(P0));

        assertThat(third.error()).isEqualTo(Errors.NONE);
        assertThat(third.session().partitions()).containsExactly(P1);
    }

    @Test
    void shouldRejectAWrongEpochAndAMissingSession() {
        cache.update("g", "m", 0, List.of(P0), List.of());

        assertThat(cache.update("g", "m", 2, List.of(), List.of()).error())
                .isEqualTo(Errors.INVALID_SHARE_SESSION_EPOCH);
        assertThat(cache.update("g", "other", 1, List.of(), List.of()).error())
                .isEqualTo(Errors.SHARE_SESSION_NOT_FOUND);
        cache.close("g", "m");
        assertThat(cache.update("g", "m", 1, List.of(), List.of()).error())
                .isEqualTo(Errors.SHARE_SESSION_NOT_FOUND);
    }

    @Test
    void shouldReplaceASessionReopenedWithEpochZero() {
        cache.update("g", "m", 0, List.of(P0), List.of());
        cache.update("g", "m", 1, List.of(), List.of());

        ShareSessionCache.Result reopened = cache.update("g", "m", 0, List.of(P1), List.of());

        assertThat(reopened.session().partitions()).containsExactly(P1);
        assertThat(cache.update("g", "m", 1, List.of(), List.of()).error()).isEqualTo(Errors.NONE);
    }
}
