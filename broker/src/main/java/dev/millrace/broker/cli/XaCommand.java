package dev.millrace.broker.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

import dev.millrace.protocol.ext.ExtensionFormatException;
import dev.millrace.protocol.ext.XaCodes;
import dev.millrace.protocol.ext.XaComplete;
import dev.millrace.protocol.ext.XaRecover;
import dev.millrace.protocol.ext.XaXid;

/**
 * {@code millrace xa}: XA transaction branches for administrators, over the XA extensions ({@link XaClient}).
 *
 * <ul>
 *   <li>{@code millrace xa list --bootstrap HOST:PORT [--prefix ID_PREFIX] [--in-doubt]}: every branch the cluster's
 *       transaction coordinators know, oldest first: Xid, state, age, transactional id, producer id, how many
 *       partitions it holds.</li>
 *   <li>{@code millrace xa commit|rollback --bootstrap HOST:PORT --xid XID}: resolves an in-doubt branch by hand.
 *       This is a heuristic decision in XA's terms: the branch stays listed (heuristically committed or rolled back)
 *       and its transaction manager, when it comes back, is told (XA_HEURCOM or XA_HEURRB) and forgets it.</li>
 *   <li>{@code millrace xa forget --bootstrap HOST:PORT --xid XID}: forgets a heuristically completed branch whose
 *       transaction manager will never come back.</li>
 * </ul>
 * A Xid is written {@code <formatId>:<gtrid hex>:<bqual hex>} ({@link XaXid}), as {@code list} prints it. Exit
 * status: 0 when done, 1 when the broker answered with an XA error (printed with its code and message) or the cluster
 * could not be asked, 2 for bad arguments (a malformed Xid).
 */
@Command(name = "xa", mixinStandardHelpOptions = true,
        description = "List XA transaction branches and resolve in-doubt ones by hand.",
        subcommands = {XaCommand.ListBranches.class, XaCommand.Commit.class, XaCommand.Rollback.class,
                XaCommand.Forget.class})
final class XaCommand {

    @Option(names = "--bootstrap", required = true, scope = CommandLine.ScopeType.INHERIT,
            description = "A broker's HOST:PORT (or a comma-separated list).")
    String bootstrap;

    @Option(names = "--timeout-seconds", defaultValue = "30", scope = CommandLine.ScopeType.INHERIT,
            description = "How long to wait for the cluster (default: ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    XaClient client() {
        return new XaClient(bootstrap, Duration.ofSeconds(timeoutSeconds));
    }

    /** {@code xa list}. */
    @Command(name = "list", mixinStandardHelpOptions = true, description = "List the XA branches, oldest first.")
    static final class ListBranches implements Callable<Integer> {

        @ParentCommand
        XaCommand parent;

        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--prefix", description = "Only branches of transactional ids starting with this.")
        String prefix;

        @Option(names = "--in-doubt", description = "Only branches waiting for a decision (and heuristic ones).")
        boolean inDoubt;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            List<XaClient.Listed> listed;
            try (XaClient client = parent.client()) {
                listed = client.recoverAll(prefix);
            }
            out.printf("%-40s %-22s %12s  %-30s %12s %10s%n", "XID", "STATE", "AGE", "TRANSACTIONAL ID",
                    "PRODUCER ID", "PARTITIONS");
            listed.stream().map(XaClient.Listed::branch).filter(b -> !inDoubt || b.state().isRecoverable())
                    .sorted(Comparator.comparingLong(XaRecover.Branch::ageMs).reversed())
                    .forEach(b -> out.printf("%-40s %-22s %12s  %-30s %12d %10d%n", b.xid(), b.state(),
                            age(b.ageMs()), b.transactionalId(), b.producerId(), b.partitionCount()));
            out.flush();
            return 0;
        }
    }

    /** Shared by commit, rollback and forget. */
    abstract static class Resolve implements Callable<Integer> {

        @ParentCommand
        XaCommand parent;

        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--xid", required = true, description = "The branch, <formatId>:<gtrid hex>:<bqual hex>.")
        String xid;

        abstract XaComplete.Action action();

        @Override
        public Integer call() throws Exception {
            XaXid parsed;
            try {
                parsed = XaXid.parse(xid);
            } catch (ExtensionFormatException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            XaComplete.Response response;
            try (XaClient client = parent.client()) {
                response = client.complete(parsed, action(), action() != XaComplete.Action.FORGET);
            }
            if (response.xaCode() == XaCodes.XA_OK) {
                spec.commandLine().getOut().println(switch (action()) {
                    case COMMIT -> "Committed";
                    case ROLLBACK -> "Rolled back";
                    case FORGET -> "Forgot";
                } + " XA branch " + parsed);
                spec.commandLine().getOut().flush();
                return 0;
            }
            spec.commandLine().getErr().println(XaCodes.name(response.xaCode()) + ": " + response.errorMessage());
            spec.commandLine().getErr().flush();
            return 1;
        }
    }

    /** {@code xa commit}. */
    @Command(name = "commit", mixinStandardHelpOptions = true,
            description = "Commit an in-doubt XA branch by hand (a heuristic decision).")
    static final class Commit extends Resolve {
        @Override
        XaComplete.Action action() {
            return XaComplete.Action.COMMIT;
        }
    }

    /** {@code xa rollback}. */
    @Command(name = "rollback", mixinStandardHelpOptions = true,
            description = "Roll an in-doubt XA branch back by hand (a heuristic decision).")
    static final class Rollback extends Resolve {
        @Override
        XaComplete.Action action() {
            return XaComplete.Action.ROLLBACK;
        }
    }

    /** {@code xa forget}. */
    @Command(name = "forget", mixinStandardHelpOptions = true,
            description = "Forget a heuristically completed XA branch.")
    static final class Forget extends Resolve {
        @Override
        XaComplete.Action action() {
            return XaComplete.Action.FORGET;
        }
    }

    /** {@code 3d 04:05:06}, {@code 04:05:06}. */
    static String age(long ms) {
        long s = ms / 1000;
        String hms = String.format("%02d:%02d:%02d", s / 3600 % 24, s / 60 % 60, s % 60);
        return s >= 86_400 ? s / 86_400 + "d " + hms : hms;
    }
}
