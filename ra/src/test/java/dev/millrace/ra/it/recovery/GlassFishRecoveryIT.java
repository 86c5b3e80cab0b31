package dev.millrace.ra.it.recovery;

import java.net.URI;
import java.nio.file.Path;

import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;

import dev.millrace.ra.it.GlassFishMdbBindings;
import dev.millrace.ra.it.recovery.app.RecoveryMdb;

/**
 * {@link RecoveryScenario} in GlassFish 7, a {@link GlassFishProcess} domain with port base {@value #PORT_BASE}
 * (admin {@code 14848}, HTTP {@code 14880}) set up with {@code asadmin} as ra/README.md describes: the adapter's
 * {@code brokers} ({@code create-resource-adapter-config}), the .rar, the adapter's XA connector connection pool and
 * its resource, an XA connection pool of GlassFish's embedded Derby over a database file and its JDBC resource, and
 * the application, whose MDB is bound to the adapter in {@code glassfish-ejb-jar.xml}.
 *
 * <p>What GlassFish 7.0.20 needs for recovery, learnt here: its transaction service's {@code automatic-recovery} on
 * (off by default; in-doubt transactions are recovered at start), and a server-level XA connector connection pool of
 * the adapter: GlassFish asks the adapter's {@code getXAResources} for its CMT message-driven beans ("Recovery of
 * Inbound Transactions") but does not hand the XAResources it gets to its recovery, so without such a pool the
 * inbound branch stays in doubt (seen: still prepared two minutes after the restart). Recovery goes through a
 * managed connection of the pool.
 */
class GlassFishRecoveryIT extends RecoveryScenario {

    static final int PORT_BASE = 14800;
    private static final String DATA_SOURCE = "jdbc/MillraceRecoveryXA";

    @Override
    protected ServerProcess startWithApplication(Path dir, int gatePort) throws Exception {
        GlassFishProcess gf = GlassFishProcess.create(Path.of(System.getProperty("glassfish.home")),
                dir.resolve("domains"), PORT_BASE);
        gf.start();
        gf.asadmin("set", "configs.config.server-config.transaction-service.automatic-recovery=true");
        gf.asadmin("create-resource-adapter-config", "--property", "brokers=127.0.0.1\\:" + gatePort, "millrace-ra");
        gf.asadmin("deploy", "--name", "millrace-ra", builtRar().toString());
        gf.asadmin("create-connector-connection-pool", "--raname", "millrace-ra", "--connectiondefinition",
                "jakarta.jms.ConnectionFactory", "--transactionsupport", "XATransaction", "--steadypoolsize", "0",
                "--property", "brokers=127.0.0.1\\:" + gatePort, "millrace-pool");
        gf.asadmin("create-connector-resource", "--poolname", "millrace-pool", "jms/millrace/ConnectionFactory");
        gf.asadmin("create-jdbc-connection-pool", "--datasourceclassname",
                "org.apache.derby.jdbc.EmbeddedXADataSource", "--restype", "javax.sql.XADataSource", "--property",
                "databaseName=" + dir.resolve("db").toAbsolutePath().toString().replace(":", "\\:")
                        + ":connectionAttributes=;create\\=true", "MillraceRecoveryPool");
        gf.asadmin("create-jdbc-resource", "--connectionpoolid", "MillraceRecoveryPool", DATA_SOURCE);
        Path war = dir.resolve(WAR + ".war");
        application(DATA_SOURCE).addAsWebInfResource(new StringAsset(GlassFishMdbBindings.of(RecoveryMdb.class)), "glassfish-ejb-jar.xml")
                .as(ZipExporter.class).exportTo(war.toFile());
        gf.asadmin("deploy", "--name", WAR, "--contextroot", WAR, war.toString());
        return gf;
    }

    @Override
    protected URI rowsUrl() {
        return URI.create("http://127.0.0.1:" + (PORT_BASE + 80) + "/" + WAR + "/rows");
    }
}
