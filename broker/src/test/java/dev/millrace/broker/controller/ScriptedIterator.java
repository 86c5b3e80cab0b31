package dev.millrace.broker.controller;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import com.alipay.sofa.jraft.Closure;
import com.alipay.sofa.jraft.Iterator;
import com.alipay.sofa.jraft.Status;

/**
 * A jraft {@link Iterator} over scripted data entries, recording what the state machine did with
 * them: how far it got and whether it asked for a rollback. Not thread-safe.
 */
final class ScriptedIterator implements Iterator {

    private final long firstIndex;
    private final List<ByteBuffer> entries = new ArrayList<>();
    private final List<Closure> closures = new ArrayList<>();
    private int position;
    private Status rollbackStatus;
    private long rollbackTail;
    private long rollbackIndex = -1;

    ScriptedIterator(long firstIndex) {
        this.firstIndex = firstIndex;
    }

    ScriptedIterator add(byte[] data, Closure done) {
        entries.add(ByteBuffer.wrap(data));
        closures.add(done);
        return this;
    }

    Status rollbackStatus() {
        return rollbackStatus;
    }

    long rollbackTail() {
        return rollbackTail;
    }

    long rollbackIndex() {
        return rollbackIndex;
    }

    @Override
    public boolean hasNext() {
        return rollbackStatus == null && position < entries.size();
    }

    @Override
    public ByteBuffer next() {
        ByteBuffer data = getData();
        position++;
        return data;
    }

    @Override
    public ByteBuffer getData() {
        return entries.get(position);
    }

    @Override
    public long getIndex() {
        return firstIndex + position;
    }

    @Override
    public long getTerm() {
        return 1;
    }

    @Override
    public Closure done() {
        return closures.get(position);
    }

    @Override
    public void setAutoCommitPerLog(boolean status) {
    }

    @Override
    public boolean commit() {
        return false;
    }

    @Override
    public void commitAndSnapshotSync(Closure done) {
        throw new UnsupportedOperationException("not scripted");
    }

    @Override
    public void setErrorAndRollback(long ntail, Status st) {
        rollbackStatus = st;
        rollbackTail = ntail;
        rollbackIndex = getIndex();
    }
}
