package dev.millrace.broker.share;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.delay.Time;
import dev.millrace.protocol.ext.ShareMember;
import dev.millrace.protocol.selector.SelectorSyntaxException;

/**
 * What a share-partition leader knows of the members of share groups coordinated on other brokers: for each (group,
 * member) that fetched here, whether it is a current member and its selector filter, as the group's coordinator
 * answered a ShareMember request ({@link ShareMember}). Used for every share fetch of such a member, so that the
 * member's JMS selector applies on every partition leader, not only on its coordinator's node.
 *
 * <pre>
 *   view(g, m):  no entry ──────────────▶ entry PENDING, lookup sent ─▶ PENDING (the fetch acquires nothing)
 *                entry, lookup due ─────▶ lookup sent ─────────────────▶ MEMBER or PENDING as it was;
 *                                                                         NOT_MEMBER becomes PENDING
 *                entry ─────────────────────────────────────────────────▶ the entry's view
 *   answer:      NONE ──────────────────▶ MEMBER(filter of its rack id);   next lookup after refreshMs
 *                UNKNOWN_MEMBER_ID,
 *                GROUP_ID_NOT_FOUND ────▶ NOT_MEMBER;                      next lookup after retryBackoffMs
 *                other error, failure ──▶ view unchanged (a PENDING entry stays PENDING);
 *                                                                          next lookup after retryBackoffMs
 * </pre>
 *
 * <p><b>Decisions.</b> The key is (group, member id) alone: a ShareFetch carries neither the member epoch nor the rack
 * id, so the leader cannot tell from a fetch that something changed; instead a member's entry is looked up again
 * every {@code refreshMs} (the broker uses the share-group session timeout), while fetches go on with the entry as it
 * is. So a member that left, timed out or changed its rack id is seen here at most about {@code refreshMs} late.
 * Kafka clients never change a member's rack id ({@code client.rack} is fixed per consumer), and the JMS provider
 * gives every JMS consumer a share consumer (a member id) of its own, so a selector is fixed for a member's life. A
 * member's rack id, and so its selector, travels with the member: when the group's coordinator moves, the member
 * rejoins at the new one with the same member id and rack id, and entries here stay right. A member the coordinator
 * does not know (for instance one that has not rejoined a coordinator that just moved) is NOT_MEMBER: its fetches get
 * UNKNOWN_MEMBER_ID, as fetches of such members get on the coordinator's own node; that answer refuses fetches for
 * {@code retryBackoffMs} only (it bounds the lookups a stranger causes), then the member is asked about again. Lookups are driven by fetches: nothing is looked up for a member that does not fetch.
 *
 * <p>Bounded: at most {@code maxEntries} entries, the least recently used dropped first (a dropped member is looked up
 * again at its next fetch, which then acquires nothing until the answer comes). {@link #forget} drops an entry when
 * the member closes its share session here.
 *
 * <p>Threading: thread-safe, guarded by this object's monitor, never held while calling out. Lookups complete on the
 * lookup's thread; the futures of {@link #whenKnown} complete on {@code executor}.
 */
final class RemoteMemberCache {

    private static final Logger log = LoggerFactory.getLogger(RemoteMemberCache.class);

    /** Asks the coordinator of a group about one member; the future fails when it could not be asked. */
    @FunctionalInterface
    interface Lookup {
        CompletableFuture<ShareMember.Response> lookUp(String groupId, String memberId);
    }

    private record Key(String groupId, String memberId) {
    }

    /** Guarded by the cache's monitor. */
    private static final class Entry {
        MemberView view = MemberView.PENDING;
        long nextLookupAtMs;
        /** Completed (on the executor) when the running lookup ends; null when none runs. */
        CompletableFuture<Void> inFlight;
    }

    private final Lookup lookup;
    private final Time time;
    private final Executor executor;
    private final long refreshMs;
    private final long retryBackoffMs;
    private final Map<Key, Entry> entries;

    /**
     * @param executor       where {@link #whenKnown} futures complete (their callbacks may acquire records)
     * @param refreshMs      how long an answer naming a member is used before it is looked up again
     * @param retryBackoffMs how long after a failed lookup, or an answer naming no member, the next one may go
     * @param maxEntries     the most entries kept
     */
    RemoteMemberCache(Lookup lookup, Time time, Executor executor, long refreshMs, long retryBackoffMs,
                      int maxEntries) {
        this.lookup = Objects.requireNonNull(lookup, "lookup");
        this.time = Objects.requireNonNull(time, "time");
        this.executor = Objects.requireNonNull(executor, "executor");
        if (refreshMs < 1 || retryBackoffMs < 0 || maxEntries < 1) {
            throw new IllegalArgumentException("refreshMs must be positive (got " + refreshMs + "), retryBackoffMs "
                    + "not negative (got " + retryBackoffMs + "), maxEntries positive (got " + maxEntries + ")");
        }
        this.refreshMs = refreshMs;
        this.retryBackoffMs = retryBackoffMs;
        this.entries = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Key, Entry> eldest) {
                return size() > maxEntries;
            }
        };
    }

    /** What is known of {@code memberId} of {@code groupId}; starts a lookup when none is known or one is due. */
    MemberView view(String groupId, String memberId) {
        Key key = new Key(groupId, memberId);
        Entry entry;
        CompletableFuture<Void> started;
        synchronized (this) {
            entry = entries.get(key);
            if (entry == null) {
                entry = new Entry();
                entries.put(key, entry);
            } else if (entry.inFlight != null || time.hiResClockMs() < entry.nextLookupAtMs) {
                return entry.view;
            }
            started = new CompletableFuture<>();
            entry.inFlight = started;
            if (entry.view == MemberView.NOT_MEMBER) {
                entry.view = MemberView.PENDING; // too old to refuse a fetch with: the member may have rejoined
            }
        }
        send(key, entry, started);
        synchronized (this) {
            return entry.view;
        }
    }

    /**
     * A future completed, on the executor, when the lookup of {@code memberId} running now ends (then {@link #view}
     * tells the answer); empty when none runs.
     */
    synchronized Optional<CompletableFuture<Void>> whenKnown(String groupId, String memberId) {
        Entry entry = entries.get(new Key(groupId, memberId));
        return entry == null || entry.inFlight == null ? Optional.empty() : Optional.of(entry.inFlight.copy());
    }

    /** Drops what is known of {@code memberId} (it closed its share session here). */
    synchronized void forget(String groupId, String memberId) {
        entries.remove(new Key(groupId, memberId));
    }

    /** The number of entries, for tests. */
    synchronized int size() {
        return entries.size();
    }

    private void send(Key key, Entry entry, CompletableFuture<Void> done) {
        CompletableFuture<ShareMember.Response> answer;
        try {
            answer = lookup.lookUp(key.groupId(), key.memberId());
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        answer.whenComplete((response, error) -> answered(key, entry, response, error, done));
    }

    private void answered(Key key, Entry entry, ShareMember.Response response, Throwable error,
                          CompletableFuture<Void> done) {
        MemberView view = null;
        long waitMs = retryBackoffMs;
        if (error != null) {
            log.debug("Could not ask the coordinator of share group {} about member {}: {}", key.groupId(),
                    key.memberId(), error.toString());
        } else {
            Errors code = Errors.forCode(response.errorCode());
            if (code == Errors.NONE) {
                try {
                    view = MemberView.member(MemberFilter.of(response.rackId()));
                    waitMs = refreshMs;
                } catch (SelectorSyntaxException e) {
                    // the coordinator accepted it, so this broker's selector language differs: acquire nothing
                    log.warn("Member {} of share group {} carries a selector this broker cannot compile, so it "
                            + "acquires nothing here: {}", key.memberId(), key.groupId(), e.getMessage());
                    view = MemberView.PENDING;
                    waitMs = refreshMs;
                }
            } else if (code == Errors.UNKNOWN_MEMBER_ID || code == Errors.GROUP_ID_NOT_FOUND) {
                view = MemberView.NOT_MEMBER;
            } else {
                log.debug("The coordinator of share group {} did not describe member {}: {} {}", key.groupId(),
                        key.memberId(), code, response.errorMessage());
            }
        }
        synchronized (this) {
            if (view != null) {
                entry.view = view;
            }
            entry.nextLookupAtMs = time.hiResClockMs() + waitMs;
            entry.inFlight = null;
        }
        try {
            executor.execute(() -> done.complete(null));
        } catch (RejectedExecutionException stopping) {
            done.complete(null);
        }
    }
}
