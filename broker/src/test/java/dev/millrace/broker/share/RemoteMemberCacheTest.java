package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.protocol.ext.ShareMember;

/**
 * The share-partition leader's cache of members of groups coordinated elsewhere: nothing acquirable until the
 * coordinator answered, the answer's selector, refreshes, strangers, failed lookups and the size bound, on a manual
 * clock with lookups answered by hand.
 */
@Timeout(10)
class RemoteMemberCacheTest {

    private static final long REFRESH_MS = 1000;
    private static final long BACKOFF_MS = 100;
    private static final String RED = "millrace.selector:color = 'red'";

    private record Asked(String groupId, String memberId, CompletableFuture<ShareMember.Response> answer) {
    }

    private final ManualClock clock = new ManualClock();
    private final List<Asked> asked = new ArrayList<>();
    private final RemoteMemberCache cache = cache(100);

    private RemoteMemberCache cache(int maxEntries) {
        return new RemoteMemberCache((g, m) -> {
            CompletableFuture<ShareMember.Response> answer = new CompletableFuture<>();
            asked.add(new Asked(g, m, answer));
            return answer;
        }, clock, Runnable::run, REFRESH_MS, BACKOFF_MS, maxEntries);
    }

    private void answerLast(ShareMember.Response response) {
        asked.get(asked.size() - 1).answer().complete(response);
    }

    private static ShareMember.Response error(Errors error) {
        return ShareMember.Response.error(error.code(), error.message());
    }

    @Test
    void shouldAcquireNothingUntilTheCoordinatorAnswersThenApplyTheMembersSelector() {
        assertThat(cache.view("g", "a")).isEqualTo(MemberView.PENDING);
        assertThat(cache.view("g", "a")).as("still asking").isEqualTo(MemberView.PENDING);
        assertThat(asked).hasSize(1);
        assertThat(asked.get(0).groupId()).isEqualTo("g");
        assertThat(asked.get(0).memberId()).isEqualTo("a");
        CompletableFuture<Void> known = cache.whenKnown("g", "a").orElseThrow();
        assertThat(known).isNotDone();

        answerLast(ShareMember.Response.member(3, RED));

        assertThat(known).isDone();
        MemberView view = cache.view("g", "a");
        assertThat(view.status()).isEqualTo(MemberView.Status.MEMBER);
        assertThat(view.filter().selector().text()).isEqualTo("color = 'red'");
        assertThat(view.filter().archiveUnmatched()).isFalse();
        assertThat(cache.whenKnown("g", "a")).as("nothing runs").isEmpty();
        assertThat(asked).hasSize(1);
    }

    @Test
    void shouldLetAMemberWithoutSelectorAcquireEverything() {
        cache.view("g", "plain");
        answerLast(ShareMember.Response.member(1, null));
        assertThat(cache.view("g", "plain")).isEqualTo(MemberView.UNFILTERED);

        cache.view("g", "racked");
        answerLast(ShareMember.Response.member(1, "eu-west-1a"));
        assertThat(cache.view("g", "racked")).as("an ordinary rack id").isEqualTo(MemberView.UNFILTERED);

        cache.view("g", "sub");
        answerLast(ShareMember.Response.member(1, "millrace.subscription.selector:x > 1"));
        assertThat(cache.view("g", "sub").filter().archiveUnmatched()).isTrue();
    }

    @Test
    void shouldRefuseAStrangerOnlyForTheBackoffThenAskAgain() {
        cache.view("g", "stranger");
        answerLast(error(Errors.UNKNOWN_MEMBER_ID));
        assertThat(cache.view("g", "stranger")).isEqualTo(MemberView.NOT_MEMBER);
        clock.advanceMs(BACKOFF_MS - 1);
        assertThat(cache.view("g", "stranger")).isEqualTo(MemberView.NOT_MEMBER);
        assertThat(asked).hasSize(1);

        clock.advanceMs(1);
        assertThat(cache.view("g", "stranger")).as("it may have rejoined meanwhile").isEqualTo(MemberView.PENDING);
        assertThat(asked).hasSize(2);
        answerLast(ShareMember.Response.member(5, null));
        assertThat(cache.view("g", "stranger")).isEqualTo(MemberView.UNFILTERED);

        cache.view("nogroup", "a");
        answerLast(error(Errors.GROUP_ID_NOT_FOUND));
        assertThat(cache.view("nogroup", "a")).isEqualTo(MemberView.NOT_MEMBER);
    }

    @Test
    void shouldStayPendingNeverUnfilteredWhenTheCoordinatorCannotBeAsked() {
        cache.view("g", "a");
        asked.get(0).answer().completeExceptionally(new IOException("connection refused"));
        assertThat(cache.view("g", "a")).isEqualTo(MemberView.PENDING);
        assertThat(asked).as("not again before the backoff").hasSize(1);

        clock.advanceMs(BACKOFF_MS);
        assertThat(cache.view("g", "a")).isEqualTo(MemberView.PENDING);
        answerLast(error(Errors.NOT_COORDINATOR));
        assertThat(cache.view("g", "a")).isEqualTo(MemberView.PENDING);

        clock.advanceMs(BACKOFF_MS);
        cache.view("g", "a");
        answerLast(ShareMember.Response.member(2, RED));
        assertThat(cache.view("g", "a").filter().selector().text()).isEqualTo("color = 'red'");
        assertThat(asked).hasSize(3);
    }

    @Test
    void shouldStayPendingWhenTheLookupThrows() {
        RemoteMemberCache throwing = new RemoteMemberCache((g, m) -> {
            throw new IllegalStateException("closed");
        }, clock, Runnable::run, REFRESH_MS, BACKOFF_MS, 10);

        assertThat(throwing.view("g", "a")).isEqualTo(MemberView.PENDING);
        assertThat(throwing.whenKnown("g", "a")).isEmpty();
    }

    @Test
    void shouldKeepUsingTheAnswerWhileRefreshingAndTakeTheNewOne() {
        cache.view("g", "a");
        answerLast(ShareMember.Response.member(1, RED));
        clock.advanceMs(REFRESH_MS - 1);
        cache.view("g", "a");
        assertThat(asked).hasSize(1);

        clock.advanceMs(1);
        assertThat(cache.view("g", "a").filter().selector().text()).as("while refreshing").isEqualTo("color = 'red'");
        assertThat(asked).hasSize(2);
        answerLast(ShareMember.Response.member(4, "millrace.selector:color = 'blue'"));
        assertThat(cache.view("g", "a").filter().selector().text()).isEqualTo("color = 'blue'");

        clock.advanceMs(REFRESH_MS);
        cache.view("g", "a");
        answerLast(error(Errors.COORDINATOR_NOT_AVAILABLE));
        assertThat(cache.view("g", "a").filter().selector().text()).as("a failed refresh keeps the answer")
                .isEqualTo("color = 'blue'");

        clock.advanceMs(BACKOFF_MS);
        cache.view("g", "a");
        answerLast(error(Errors.UNKNOWN_MEMBER_ID));
        assertThat(cache.view("g", "a")).as("the member left").isEqualTo(MemberView.NOT_MEMBER);
    }

    @Test
    void shouldKeepAtMostMaxEntriesDroppingTheLeastRecentlyUsed() {
        RemoteMemberCache small = cache(2);
        small.view("g", "a");
        answerLast(ShareMember.Response.member(1, RED));
        small.view("g", "b");
        answerLast(ShareMember.Response.member(1, null));
        small.view("g", "a"); // a is now the most recently used
        small.view("g", "c");
        answerLast(ShareMember.Response.member(1, null));

        assertThat(small.size()).isEqualTo(2);
        assertThat(small.view("g", "a").filter()).isNotNull();
        assertThat(asked).hasSize(3);
        assertThat(small.view("g", "b")).as("dropped: asked again").isEqualTo(MemberView.PENDING);
        assertThat(asked).hasSize(4);
    }

    @Test
    void shouldAskAgainAfterForget() {
        cache.view("g", "a");
        answerLast(ShareMember.Response.member(1, RED));
        cache.forget("g", "a");

        assertThat(cache.size()).isZero();
        assertThat(cache.view("g", "a")).isEqualTo(MemberView.PENDING);
        assertThat(asked).hasSize(2);
    }
}
