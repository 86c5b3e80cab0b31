package dev.millrace.ra.it.recovery;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;

import org.jboss.shrinkwrap.api.exporter.ZipExporter;

/**
 * {@link RecoveryScenario} in WildFly ({@code standalone-full}), a {@link WildFlyProcess} with a port offset of
 * {@value #PORT_OFFSET}: the .rar and the application go into the deployment scanner's directory (deployed at every
 * boot), the XA data source is WildFly's H2 driver over a database file, added to the server's configuration, and
 * Narayana's periodic recovery runs every few seconds ({@code RecoveryEnvironmentBean} system properties) instead of
 * every two minutes. The commit the gate holds is the adapter's {@code XaComplete} (the inbound branch has no
 * producer of its own). Recovery finds the branch through the adapter's {@code getXAResources} (seen to pass with the
 * outbound pool's recovery turned off in {@code ironjacamar.xml}, and to fail with both gone).
 */
class WildFlyRecoveryIT extends RecoveryScenario {

    static final int PORT_OFFSET = 200;
    private static final String DATA_SOURCE = "java:jboss/datasources/MillraceRecoveryXA";

    @Override
    protected ServerProcess startWithApplication(Path dir, int gatePort) throws IOException {
        WildFlyProcess wildfly = WildFlyProcess.prepare(Path.of(System.getProperty("jboss.home")),
                dir.resolve("wildfly"), config -> withDataSource(config, dir.resolve("db")), List.of(
                        "-Djboss.socket.binding.port-offset=" + PORT_OFFSET,
                        "-Dmillrace.brokers=127.0.0.1:" + gatePort,
                        "-Dejb.resource-adapter-name=millrace-ra.rar",
                        "-Dsofa.middleware.log.disable=true",
                        "-DRecoveryEnvironmentBean.periodicRecoveryPeriod=3",
                        "-DRecoveryEnvironmentBean.recoveryBackoffPeriod=1"));
        Files.copy(builtRar(), wildfly.deployments().resolve("millrace-ra.rar"));
        application(DATA_SOURCE).as(ZipExporter.class)
                .exportTo(wildfly.deployments().resolve(WAR + ".war").toFile());
        wildfly.start();
        return wildfly;
    }

    @Override
    protected URI rowsUrl() {
        return URI.create("http://127.0.0.1:" + (8080 + PORT_OFFSET) + "/" + WAR + "/rows");
    }

    /** The server's configuration with an XA data source of WildFly's H2 driver over a database file. */
    static String withDataSource(String config, Path db) {
        String dataSource = """
                <xa-datasource jndi-name="%s" pool-name="MillraceRecoveryXA">
                    <xa-datasource-property name="URL">jdbc:h2:file:%s</xa-datasource-property>
                    <driver>h2</driver>
                    <security user-name="sa" password="sa"/>
                    <recovery>
                        <recover-credential user-name="sa" password="sa"/>
                    </recovery>
                </xa-datasource>
                <drivers>""".formatted(DATA_SOURCE, db.toAbsolutePath());
        if (!config.contains("<drivers>")) {
            throw new IllegalStateException("standalone-full.xml has no <drivers> element to put the data source by");
        }
        return config.replaceFirst("<drivers>", Matcher.quoteReplacement(dataSource));
    }
}
