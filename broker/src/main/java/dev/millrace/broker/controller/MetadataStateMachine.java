package dev.millrace.broker.controller;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongConsumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.alipay.sofa.jraft.Closure;
import com.alipay.sofa.jraft.Iterator;
import com.alipay.sofa.jraft.Status;
import com.alipay.sofa.jraft.core.StateMachineAdapter;
import com.alipay.sofa.jraft.entity.LeaderChangeContext;
import com.alipay.sofa.jraft.error.RaftError;
import com.alipay.sofa.jraft.error.RaftException;
import com.alipay.sofa.jraft.storage.snapshot.SnapshotReader;
import com.alipay.sofa.jraft.storage.snapshot.SnapshotWriter;

/**
 * The replicated metadata state machine: replays committed record batches into a new immutable
 * {@link MetadataImage}, saves and loads snapshots, and tracks whether this voter is the active
 * controller.
 *
 * <p>Applying an entry: decode the batch ({@link MetadataRecordSerde}), replay every record into a
 * {@link MetadataImageBuilder}, publish the new image, call the listeners in order, then run the
 * entry's closure (present on the leader that proposed it), which completes the caller's future.
 * An entry that cannot be decoded or replayed is never skipped: the iterator is told
 * {@code setErrorAndRollback}, the entry stays unapplied and jraft stops this node's state machine
 * (its pending closures fail), since going on would let this voter's image diverge.
 *
 * <p>Snapshots are one file written by {@link MetadataSnapshotFile}, synchronously on the applying
 * thread (the metadata is small and the image immutable, so it is consistent with the last applied
 * entry). Loading a snapshot replaces the image and notifies listeners with the loaded image.
 *
 * <p>Leadership: this voter acts as the active controller only between {@link #onLeaderStart} and
 * {@link #onLeaderStop}. jraft calls {@code onLeaderStart} once the new term's configuration entry
 * is applied, so at that point every entry of earlier terms is already in the image.
 *
 * <p>Threading: jraft calls the callbacks on its single state-machine thread; {@link #image()},
 * {@link #leaderTerm()} and the futures may be read from any thread. Listeners run on the
 * state-machine thread and must not block; an exception thrown by one is logged and does not stop
 * the others or the replay.
 */
public final class MetadataStateMachine extends StateMachineAdapter {

    private static final Logger LOG = LoggerFactory.getLogger(MetadataStateMachine.class);

    private final String logPrefix;
    private final List<MetadataListener> listeners = new CopyOnWriteArrayList<>();
    private final List<LongConsumer> leaderStartListeners = new CopyOnWriteArrayList<>();
    private final CompletableFuture<Void> leaderKnown = new CompletableFuture<>();
    private final Object leadershipLock = new Object();

    private volatile MetadataImage image = MetadataImage.EMPTY;
    private volatile long leaderTerm = -1;
    /** The {@code host:port} of the leader this voter followed last; null before it followed any. */
    private volatile String lastFollowedLeader;
    private volatile RaftException fatalError;
    private CompletableFuture<Long> activation = new CompletableFuture<>();

    public MetadataStateMachine(String logPrefix) {
        this.logPrefix = logPrefix;
    }

    public MetadataImage image() {
        return image;
    }

    public void registerListener(MetadataListener listener) {
        listeners.add(listener);
    }

    /** {@code listener} gets the term each time this voter becomes the active controller (state-machine thread). */
    void registerLeaderStartListener(LongConsumer listener) {
        leaderStartListeners.add(listener);
    }

    /** The term in which this voter is the active controller, or -1 when it is not. */
    public long leaderTerm() {
        return leaderTerm;
    }

    /** Completes once this voter has a leader: it became leader or started following one. */
    CompletableFuture<Void> leaderKnown() {
        return leaderKnown;
    }

    /** Completes with the term once this voter is the active controller (at once if it is now). */
    CompletableFuture<Long> whenActive() {
        synchronized (leadershipLock) {
            return activation.copy();
        }
    }

    /** The error that stopped the state machine, or null. */
    RaftException fatalError() {
        return fatalError;
    }

    @Override
    public void onApply(Iterator iter) {
        while (iter.hasNext()) {
            long index = iter.getIndex();
            MetadataImage next;
            try {
                next = replayEntry(iter.getData(), index);
            } catch (RuntimeException e) {
                LOG.error("{}Cannot apply metadata log entry {} of term {}; stopping the state machine",
                        logPrefix, index, iter.getTerm(), e);
                iter.setErrorAndRollback(1, new Status(RaftError.ESTATEMACHINE,
                        "Cannot apply metadata log entry %d: %s", index, e.getMessage()));
                return;
            }
            publish(next);
            Closure done = iter.done();
            if (done != null) {
                done.run(Status.OK());
            }
            iter.next();
        }
    }

    private MetadataImage replayEntry(ByteBuffer data, long index) {
        List<MetadataRecord> records = MetadataRecordSerde.decode(data == null ? ByteBuffer.allocate(0) : data);
        MetadataImageBuilder builder = new MetadataImageBuilder(image);
        for (MetadataRecord record : records) {
            builder.replay(record);
        }
        return builder.build(index);
    }

    private void publish(MetadataImage next) {
        MetadataImage previous = image;
        image = next;
        for (MetadataListener listener : listeners) {
            try {
                listener.onMetadataUpdate(previous, next);
            } catch (RuntimeException e) {
                LOG.error("{}Metadata listener {} failed on the image at index {}", logPrefix, listener,
                        next.appliedIndex(), e);
            }
        }
    }

    @Override
    public void onSnapshotSave(SnapshotWriter writer, Closure done) {
        MetadataImage snapshot = image;
        try {
            MetadataSnapshotFile.write(Path.of(writer.getPath()), snapshot);
        } catch (IOException e) {
            LOG.error("{}Cannot write the metadata snapshot at index {} to {}", logPrefix, snapshot.appliedIndex(),
                    writer.getPath(), e);
            done.run(new Status(RaftError.EIO, "Cannot write metadata snapshot to %s: %s", writer.getPath(), e));
            return;
        }
        if (!writer.addFile(MetadataSnapshotFile.FILE_NAME)) {
            done.run(new Status(RaftError.EIO, "Cannot add %s to the snapshot in %s", MetadataSnapshotFile.FILE_NAME,
                    writer.getPath()));
            return;
        }
        LOG.info("{}Saved metadata snapshot at index {} with {} topics", logPrefix, snapshot.appliedIndex(),
                snapshot.topics().size());
        done.run(Status.OK());
    }

    @Override
    public boolean onSnapshotLoad(SnapshotReader reader) {
        if (leaderTerm >= 0) {
            LOG.error("{}Refusing to load a snapshot while leader of term {}", logPrefix, leaderTerm);
            return false;
        }
        Path file = Path.of(reader.getPath(), MetadataSnapshotFile.FILE_NAME);
        if (!Files.exists(file)) {
            LOG.error("{}Snapshot {} has no {}", logPrefix, reader.getPath(), MetadataSnapshotFile.FILE_NAME);
            return false;
        }
        MetadataImage loaded;
        try {
            loaded = MetadataSnapshotFile.read(file);
        } catch (IOException | RuntimeException e) {
            LOG.error("{}Cannot load metadata snapshot {}", logPrefix, file, e);
            return false;
        }
        LOG.info("{}Loaded metadata snapshot at index {} with {} topics", logPrefix, loaded.appliedIndex(),
                loaded.topics().size());
        publish(loaded);
        return true;
    }

    /**
     * The quorum address ({@code host:port}) of the leader this voter followed last: once this voter leads, the one
     * that led before it (when it followed that one).
     */
    Optional<String> lastFollowedLeader() {
        return Optional.ofNullable(lastFollowedLeader);
    }

    @Override
    public void onLeaderStart(long term) {
        synchronized (leadershipLock) {
            leaderTerm = term;
            if (!activation.complete(term)) {
                activation = CompletableFuture.completedFuture(term);
            }
        }
        leaderKnown.complete(null);
        LOG.info("{}Became the active controller in term {} at index {}", logPrefix, term, image.appliedIndex());
        for (LongConsumer listener : leaderStartListeners) {
            try {
                listener.accept(term);
            } catch (RuntimeException e) {
                LOG.error("{}Leader-start listener {} failed in term {}", logPrefix, listener, term, e);
            }
        }
    }

    @Override
    public void onLeaderStop(Status status) {
        long term;
        synchronized (leadershipLock) {
            term = leaderTerm;
            leaderTerm = -1;
            if (activation.isDone()) {
                activation = new CompletableFuture<>();
            }
        }
        LOG.info("{}No longer the active controller (term {}): {}", logPrefix, term, status);
    }

    @Override
    public void onStartFollowing(LeaderChangeContext ctx) {
        if (ctx.getLeaderId() != null) {
            lastFollowedLeader = ctx.getLeaderId().getEndpoint().toString();
        }
        leaderKnown.complete(null);
        LOG.info("{}Following leader {} in term {}", logPrefix, ctx.getLeaderId(), ctx.getTerm());
    }

    @Override
    public void onError(RaftException e) {
        fatalError = e;
        LOG.error("{}The metadata state machine stopped: {}", logPrefix, e.getStatus(), e);
    }
}
