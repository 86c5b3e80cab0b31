package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import picocli.CommandLine;

import dev.millrace.broker.cli.Millrace;
import dev.millrace.broker.cli.XaClient;
import dev.millrace.protocol.ext.XaCodes;
import dev.millrace.protocol.ext.XaComplete;
import dev.millrace.protocol.ext.XaXid;

/**
 * {@code millrace xa list|commit|rollback|forget} against a broker on loopback: in-doubt branches are listed with
 * their age, resolved by hand (a heuristic decision the transaction manager then learns of), forgotten; bad Xids and
 * unknown ones exit with a clear message.
 */
@Timeout(120)
class XaCommandIntegrationTest {

    @TempDir
    Path dataDir;

    private BrokerServer broker;
    private XaClient client;

    /** What one command printed, and its exit status. */
    record Run(int status, String out, String err) {
    }

    @BeforeEach
    void setUp() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of());
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()))) {
            admin.createTopics(List.of(new NewTopic("xa-topic", 2, (short) 1))).all().get();
        }
        client = new XaClient(bootstrap(), Duration.ofSeconds(20));
    }

    @AfterEach
    void tearDown() {
        if (client != null) {
            client.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    private String bootstrap() {
        return TestBrokers.bootstrap(broker);
    }

    private Run millrace(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine commandLine = new CommandLine(new Millrace()).setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err));
        int status = commandLine.execute(args);
        return new Run(status, out.toString(), err.toString());
    }

    @Test
    void shouldListInDoubtBranchesAndResolveThemByHand() throws Exception {
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", broker.boundAddress().getPort());
        XaXid first = XaIntegrationTest.xid("first");
        XaXid second = XaIntegrationTest.xid("second");
        XaIntegrationTest.prepareBranch(bootstrap(), client, address, "cli-tx-1", first, "one");
        XaIntegrationTest.prepareBranch(bootstrap(), client, address, "cli-tx-2", second, "two");

        Run list = millrace("xa", "list", "--bootstrap", bootstrap());
        assertThat(list.status()).as(list.err()).isZero();
        assertThat(list.out()).contains("XID", "STATE", "AGE", "TRANSACTIONAL ID");
        assertThat(list.out().lines().filter(l -> l.startsWith(first.toString()))).singleElement().asString()
                .contains("PREPARED", "cli-tx-1").containsPattern("\\d\\d:\\d\\d:\\d\\d");
        assertThat(list.out()).contains(second.toString());

        Run commit = millrace("xa", "commit", "--bootstrap", bootstrap(), "--xid", first.toString());
        assertThat(commit.status()).as(commit.err()).isZero();
        assertThat(commit.out()).contains("Committed XA branch " + first);
        assertThat(ReadCommitted.values(bootstrap(), "xa-topic", 2)).contains("one").doesNotContain("two");

        Run inDoubt = millrace("xa", "list", "--bootstrap", bootstrap(), "--in-doubt");
        assertThat(inDoubt.out().lines().filter(l -> l.startsWith(first.toString()))).singleElement().asString()
                .contains("HEURISTIC_COMMITTED");
        XaComplete.Response managerCommits = client.complete(first, XaComplete.Action.COMMIT, false);
        assertThat(managerCommits.xaCode()).as("the transaction manager learns of the heuristic commit")
                .isEqualTo(XaCodes.XA_HEURCOM);
        Run forget = millrace("xa", "forget", "--bootstrap", bootstrap(), "--xid", first.toString());
        assertThat(forget.status()).as(forget.err()).isZero();

        Run rollback = millrace("xa", "rollback", "--bootstrap", bootstrap(), "--xid", second.toString());
        assertThat(rollback.status()).as(rollback.err()).isZero();
        assertThat(client.complete(second, XaComplete.Action.COMMIT, false).xaCode()).isEqualTo(XaCodes.XA_HEURRB);
        assertThat(ReadCommitted.values(bootstrap(), "xa-topic", 2)).containsExactly("one");

        Run after = millrace("xa", "list", "--bootstrap", bootstrap(), "--in-doubt");
        assertThat(after.out()).doesNotContain(first.toString()).contains(second.toString());
    }

    @Test
    void shouldRefuseAMalformedXidAndReportAnUnknownOne() {
        Run malformed = millrace("xa", "commit", "--bootstrap", bootstrap(), "--xid", "7:zz:01");
        assertThat(malformed.status()).isEqualTo(2);
        assertThat(malformed.err()).contains("7:zz:01");

        Run unknown = millrace("xa", "rollback", "--bootstrap", bootstrap(), "--xid", "7:abcd:");
        assertThat(unknown.status()).isEqualTo(1);
        assertThat(unknown.err()).contains("XAER_NOTA", "7:abcd:");
    }
}
