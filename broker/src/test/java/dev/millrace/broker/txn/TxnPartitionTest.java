package dev.millrace.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.protocol.ext.XaXid;

/** The index of each transactional id's branch that is not completed, which EndTxn's commit by producer reads. */
@Timeout(10)
class TxnPartitionTest {

    private static XaBranch branch(String gtrid, String id, XaBranchState state) {
        XaXid xid = new XaXid(0x1234, gtrid.getBytes(StandardCharsets.UTF_8), "b".getBytes(StandardCharsets.UTF_8));
        return new XaBranch(xid, id, 1000, (short) 3, state, false, Set.of(), 1, 2, 3);
    }

    @Test
    void shouldIndexTheOpenBranchOfEachIdAndDropItWhenCompletedOrRemoved() {
        TxnPartition p = new TxnPartition(0, 0);
        XaBranch first = branch("g1", "tx", XaBranchState.PREPARED);
        p.putBranch(first);
        assertThat(p.openBranch("tx")).isEqualTo(first);

        p.putBranch(first.with(XaBranchState.COMMITTED, false, 10));
        assertThat(p.openBranch("tx")).as("completed").isNull();
        XaBranch second = branch("g2", "tx", XaBranchState.PREPARED);
        p.putBranch(second);
        p.removeBranch(first.xid());
        assertThat(p.openBranch("tx")).as("removing the completed one leaves the open one").isEqualTo(second);
        p.removeBranch(second.xid());
        assertThat(p.openBranch("tx")).isNull();
    }

    @Test
    void shouldRebuildTheIndexFromBranchesReplayedFromTheLog() {
        TxnPartition p = new TxnPartition(0, 0);
        XaBranch open = branch("g1", "tx-a", XaBranchState.COMMITTING);
        XaBranch done = branch("g2", "tx-b", XaBranchState.ROLLED_BACK);
        p.branches.put(open.xid(), open); // as TxnLogLoader.replay fills it
        p.branches.put(done.xid(), done);
        p.reindexBranches();
        assertThat(p.openBranch("tx-a")).isEqualTo(open);
        assertThat(p.openBranch("tx-b")).isNull();
    }
}
