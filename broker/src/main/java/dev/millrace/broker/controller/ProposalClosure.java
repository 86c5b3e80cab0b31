package dev.millrace.broker.controller;

import java.util.concurrent.CompletableFuture;

import com.alipay.sofa.jraft.Closure;
import com.alipay.sofa.jraft.Status;

/**
 * The jraft callback of one proposed entry. It runs exactly once: with OK from the state machine
 * right after the entry was replayed and published (so the image already shows it), or with an
 * error from jraft when the entry will not be applied by this leader (it lost leadership, the node
 * shut down, the state machine stopped). Whoever proposed the entry reacts through {@link #settled()}.
 *
 * <p>Thread-safe; completion happens on whichever jraft thread runs the closure.
 */
final class ProposalClosure implements Closure {

    private final CompletableFuture<Status> settled = new CompletableFuture<>();

    @Override
    public void run(Status status) {
        settled.complete(status);
    }

    /** Completes with the status the entry settled with. */
    CompletableFuture<Status> settled() {
        return settled;
    }
}
