package dev.millrace.jms;

import java.nio.charset.StandardCharsets;

import javax.transaction.xa.XAResource;

import jakarta.jms.XAConnection;
import jakarta.jms.XASession;

/**
 * An XA application in a JVM of its own, for tests that kill it with SIGKILL after prepare (run with
 * {@link ChildClient.Handle}-like process handling by {@link XaCrashIntegrationTest}):
 *
 * <pre>
 * prepare BOOTSTRAP QUEUE GTRID   sends GTRID as text to QUEUE in the branch (4660, GTRID, 01), prepares it, prints
 *                                 "prepared", then blocks until killed
 * </pre>
 */
public final class XaChildClient {

    private XaChildClient() {
    }

    public static void main(String[] args) throws Exception {
        MillraceXAConnectionFactory factory = new MillraceXAConnectionFactory(args[1]);
        factory.setRequestTimeoutMs(10_000);
        XAConnection connection = factory.createXAConnection();
        XASession session = connection.createXASession();
        XAResource resource = session.getXAResource();
        var xid = new XaResourceIntegrationTest.TestXid(4660, args[3].getBytes(StandardCharsets.US_ASCII),
                new byte[] {1});
        resource.start(xid, XAResource.TMNOFLAGS);
        session.createProducer(session.createQueue(args[2])).send(session.createTextMessage(args[3]));
        resource.end(xid, XAResource.TMSUCCESS);
        if (resource.prepare(xid) != XAResource.XA_OK) {
            throw new IllegalStateException("prepare did not answer XA_OK");
        }
        System.out.println("prepared");
        System.out.println("ready");
        System.out.flush();
        System.in.read(); // until killed (the parent never writes)
    }
}
