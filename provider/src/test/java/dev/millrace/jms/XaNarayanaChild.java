package dev.millrace.jms;

import java.util.List;

import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.jboss.narayana.jta.jms.JmsXAResourceRecoveryHelper;

import com.arjuna.ats.arjuna.common.CoreEnvironmentBean;
import com.arjuna.ats.arjuna.common.ObjectStoreEnvironmentBean;
import com.arjuna.ats.arjuna.common.RecoveryEnvironmentBean;
import com.arjuna.ats.arjuna.recovery.RecoveryManager;
import com.arjuna.ats.internal.jta.recovery.arjunacore.XARecoveryModule;
import com.arjuna.ats.jta.common.JTAEnvironmentBean;
import com.arjuna.common.internal.util.propertyservice.BeanPopulator;

import jakarta.jms.XAConnection;
import jakarta.jms.XASession;
import jakarta.transaction.Transaction;
import jakarta.transaction.TransactionManager;

/**
 * An application with a Narayana transaction manager in a JVM of its own, for {@link XaNarayanaCrashIntegrationTest}:
 *
 * <pre>
 * commit BOOTSTRAP QUEUE STORE TEXT   in one global transaction sends TEXT to QUEUE and enlists (first) a resource
 *                                     that, asked to commit, prints "committing" and "ready" and blocks until the
 *                                     JVM is killed: Narayana has logged its commit decision in STORE, Millrace's
 *                                     branch is prepared and not yet committed
 * recover BOOTSTRAP STORE             the application's next start: Narayana's recovery over STORE, with
 *                                     Millrace enlisted through JmsXAResourceRecoveryHelper; prints "ready" after
 *                                     two scans
 * </pre>
 */
public final class XaNarayanaChild {

    private XaNarayanaChild() {
    }

    public static void main(String[] args) throws Exception {
        String store = args[0].equals("commit") ? args[3] : args[2];
        for (String name : new String[] {null, "communicationStore", "stateStore"}) {
            ObjectStoreEnvironmentBean bean = name == null
                    ? BeanPopulator.getDefaultInstance(ObjectStoreEnvironmentBean.class)
                    : BeanPopulator.getNamedInstance(ObjectStoreEnvironmentBean.class, name);
            bean.setObjectStoreDir(store);
        }
        BeanPopulator.getDefaultInstance(CoreEnvironmentBean.class).setNodeIdentifier("xa-crash");
        BeanPopulator.getDefaultInstance(JTAEnvironmentBean.class).setXaRecoveryNodes(List.of("xa-crash"));
        RecoveryEnvironmentBean recovery = BeanPopulator.getDefaultInstance(RecoveryEnvironmentBean.class);
        recovery.setRecoveryListener(false);
        recovery.setRecoveryBackoffPeriod(1);
        MillraceXAConnectionFactory factory = new MillraceXAConnectionFactory(args[1]);
        factory.setRequestTimeoutMs(10_000);
        if (args[0].equals("commit")) {
            commit(factory, args[2], args[4]);
        } else {
            RecoveryManager manager = RecoveryManager.manager(RecoveryManager.DIRECT_MANAGEMENT);
            XARecoveryModule.getRegisteredXARecoveryModule()
                    .addXAResourceRecoveryHelper(new JmsXAResourceRecoveryHelper(factory));
            manager.scan();
            manager.scan();
            System.out.println("ready");
            System.out.flush();
            manager.terminate();
            System.exit(0);
        }
    }

    private static void commit(MillraceXAConnectionFactory factory, String queue, String text) throws Exception {
        TransactionManager tm = com.arjuna.ats.jta.TransactionManager.transactionManager();
        XAConnection connection = factory.createXAConnection();
        XASession session = connection.createXASession();
        tm.begin();
        Transaction tx = tm.getTransaction();
        tx.enlistResource(new StopAtCommit());
        tx.enlistResource(session.getXAResource());
        session.createProducer(session.createQueue(queue)).send(session.createTextMessage(text));
        tm.commit(); // never returns: StopAtCommit blocks until the JVM is killed
    }

    /** Votes yes; blocks in commit, after the transaction manager logged its decision. */
    static final class StopAtCommit implements XAResource {

        @Override
        public void commit(Xid xid, boolean onePhase) {
            System.out.println("committing");
            System.out.println("ready");
            System.out.flush();
            try {
                System.in.read(); // until killed (the parent never writes)
            } catch (java.io.IOException ignored) {
                // killed
            }
        }

        @Override
        public int prepare(Xid xid) {
            return XA_OK;
        }

        @Override
        public void end(Xid xid, int flags) {
        }

        @Override
        public void forget(Xid xid) {
        }

        @Override
        public int getTransactionTimeout() {
            return 0;
        }

        @Override
        public boolean isSameRM(XAResource other) {
            return other == this;
        }

        @Override
        public Xid[] recover(int flag) {
            return new Xid[0];
        }

        @Override
        public void rollback(Xid xid) {
        }

        @Override
        public boolean setTransactionTimeout(int seconds) {
            return false;
        }

        @Override
        public void start(Xid xid, int flags) {
        }
    }
}
