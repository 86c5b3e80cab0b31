package dev.millrace.ra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.OperateOnDeployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.ResourceAdapterArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.millrace.ra.it.app.AppResources;
import dev.millrace.ra.it.app.BadDestinationTypeMdb;
import dev.millrace.ra.it.app.BadMaxSessionMdb;
import dev.millrace.ra.it.app.BadSelectorMdb;
import dev.millrace.ra.it.app.DefinedQueueMdb;
import dev.millrace.ra.it.app.DefinedResourcesBean;
import dev.millrace.ra.it.app.DefinedServlet;
import dev.millrace.ra.it.app.DurableTopicMdb;
import dev.millrace.ra.it.app.Forwarding;
import dev.millrace.ra.it.app.LoadMdb;

/**
 * The resource adapter in a real GlassFish 7 ({@code domain1}, started by Arquillian) against a real Millrace broker
 * in this JVM ({@link MillraceBrokerExtension}), the scenarios of {@link ResourceAdapterScenarios}. What the server
 * is given is what ra/README.md's "Deploy to GlassFish" describes:
 * <ul>
 *   <li>the adapter's {@code brokers} (the test broker): {@code asadmin create-resource-adapter-config}, the
 *   post-boot command of {@code arquillian.xml}, run on a fresh domain before the .rar is deployed;
 *   <li>the .rar, deployed as {@code millrace-ra.rar}: its module name {@code millrace-ra} is the adapter's name;
 *   <li>the pooled connection factory (an XA connector connection pool and its connector resource) and an XA data
 *   source of GlassFish's embedded Derby, in memory: application-scoped resources in the war's
 *   {@code WEB-INF/glassfish-resources.xml} ({@code java:app/...}), the same settings as
 *   {@code asadmin create-connector-connection-pool} and {@code create-connector-resource};
 *   <li>every message-driven bean bound to {@code millrace-ra} in {@code WEB-INF/glassfish-ejb-jar.xml}
 *   ({@code <mdb-resource-adapter>}), or GlassFish would give it to its own JMS adapter.
 * </ul>
 * GlassFish answers a deployment whose activation fails with "EJB Container initialization error. Please see
 * server.log": the property is named in the server log, which is what {@link #assertDeploymentFails} reads.
 */
@ExtendWith({MillraceBrokerExtension.class, ArquillianExtension.class})
@RunAsClient
class GlassFishResourceAdapterIT extends ResourceAdapterScenarios {

    /** The module name of the deployed .rar, which beans and pools name as their resource adapter. */
    static final String ADAPTER = GlassFishMdbBindings.ADAPTER;

    static final String FACTORY_JNDI = "java:app/jms/millrace/ConnectionFactory";

    static final String DATA_SOURCE_JNDI = "java:app/jdbc/MillraceItXA";

    @ArquillianResource
    private Deployer deployer;

    @ArquillianResource
    @OperateOnDeployment("app")
    private URL app;

    @Override
    protected Deployer deployer() {
        return deployer;
    }

    @Override
    protected URL appUrl() {
        return app;
    }

    @Deployment(name = "rar", order = 1, testable = false)
    static ResourceAdapterArchive rar() {
        return builtRar();
    }

    @Deployment(name = "app", order = 2, testable = false)
    static WebArchive app() {
        return appWar("millrace-it.war", Map.of(AppResources.CONNECTION_FACTORY, FACTORY_JNDI,
                AppResources.DATA_SOURCE, DATA_SOURCE_JNDI), APP_CLASSES)
                .addAsWebInfResource(new StringAsset(resources(true)), "glassfish-resources.xml")
                .addAsWebInfResource(new StringAsset(GlassFishMdbBindings.of(APP_CLASSES)), "glassfish-ejb-jar.xml");
    }

    @Deployment(name = "topic-app", managed = false, testable = false)
    static WebArchive topicApp() {
        return factoryOnlyWar("millrace-topic-it.war", DurableTopicMdb.class, AppResources.class);
    }

    @Deployment(name = "load-app", managed = false, testable = false)
    static WebArchive loadApp() {
        return factoryOnlyWar("millrace-load-it.war", LoadMdb.class, Forwarding.class, AppResources.class);
    }

    /** A war of {@code classes} with its own connection factory (application-scoped) and its MDBs bound. */
    private static WebArchive factoryOnlyWar(String name, Class<?>... classes) {
        return appWar(name, Map.of(AppResources.CONNECTION_FACTORY, FACTORY_JNDI), classes)
                .addAsWebInfResource(new StringAsset(resources(false)), "glassfish-resources.xml")
                .addAsWebInfResource(new StringAsset(GlassFishMdbBindings.of(classes)), "glassfish-ejb-jar.xml");
    }

    @Deployment(name = "defined-app", managed = false, testable = false)
    static WebArchive definedApp() {
        return ShrinkWrap.create(WebArchive.class, "millrace-defined-it.war")
                .addClasses(DefinedResourcesBean.class, DefinedServlet.class, DefinedQueueMdb.class)
                .addAsWebInfResource(new StringAsset(GlassFishMdbBindings.of(DefinedQueueMdb.class)),
                        "glassfish-ejb-jar.xml");
    }

    @Deployment(name = "bad-type", managed = false, testable = false)
    static WebArchive badType() {
        return badWar("bad-type.war", BadDestinationTypeMdb.class);
    }

    @Deployment(name = "bad-max", managed = false, testable = false)
    static WebArchive badMaxSession() {
        return badWar("bad-max.war", BadMaxSessionMdb.class);
    }

    @Deployment(name = "bad-selector", managed = false, testable = false)
    static WebArchive badSelector() {
        return badWar("bad-selector.war", BadSelectorMdb.class);
    }

    /**
     * The deployment fails, and the server log names {@code property} once more than before it. Every
     * {@code server.log*} file of the domain is read, so a log rotated meanwhile does not hide the line; when the line
     * does not come, the assertion shows which log files there are and the end of the current one. A run in which
     * GlassFish wrote nothing of its own to its log files is reported as skipped, not passed.
     */
    @Override
    protected void assertDeploymentFails(String deployment, String property) {
        Path logs = Path.of(System.getProperty("glassfish.home"), "glassfish", "domains", "domain1", "logs");
        Pattern expected = Pattern.compile("RAR8501: Exception during endpoint activation for ra \\[ " + ADAPTER
                + " \\][^\\n]*" + Pattern.quote(property));
        try {
            int before = occurrences(logs, expected);
            assertThatThrownBy(() -> deployer().deploy(deployment)).hasStackTraceContaining("EJB Container");
            // GlassFish writes its log asynchronously: the line may come a little after the failed deploy returns
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            int after = occurrences(logs, expected);
            while (after <= before && System.nanoTime() - deadline < 0) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                after = occurrences(logs, expected);
            }
            // seen in some clean-clone runs: GlassFish wrote nothing of its own to server.log (only the launcher's
            // lines), so no line can be found there; the deployment did fail, but which property it named is unknown
            String described = describe(logs);
            org.junit.jupiter.api.Assumptions.assumeTrue(after > before
                    || occurrences(logs, Pattern.compile("\\[GF 7")) > 0, () -> "GlassFish wrote no log of its own to "
                    + logs + " in this run, so the property the failure named cannot be read; " + described);
            assertThat(after).as("lines matching %s in %s after the failed deployment %s (before it: %d); %s",
                    expected, logs, deployment, before, describe(logs)).isGreaterThan(before);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            try {
                deployer().undeploy(deployment);
            } catch (RuntimeException ignored) {
                // not deployed: nothing to remove
            }
        }
    }

    /** How many lines of the domain's {@code server.log*} files match {@code pattern}. */
    private static int occurrences(Path logs, Pattern pattern) throws IOException {
        int count = 0;
        for (Path file : serverLogs(logs)) {
            Matcher matcher = pattern.matcher(Files.readString(file, StandardCharsets.ISO_8859_1));
            while (matcher.find()) {
                count++;
            }
        }
        return count;
    }

    private static List<Path> serverLogs(Path logs) throws IOException {
        try (Stream<Path> files = Files.list(logs)) {
            return files.filter(f -> f.getFileName().toString().startsWith("server.log")).sorted().toList();
        }
    }

    /** The log files with their sizes, and the last 2,000 characters of {@code server.log}. */
    private static String describe(Path logs) throws IOException {
        StringBuilder text = new StringBuilder("log files:");
        for (Path file : serverLogs(logs)) {
            text.append(' ').append(file.getFileName()).append(" (").append(Files.size(file)).append(" bytes)");
        }
        Path current = logs.resolve("server.log");
        if (Files.exists(current)) {
            String all = Files.readString(current, StandardCharsets.ISO_8859_1);
            text.append("; end of server.log:\n").append(all.substring(Math.max(0, all.length() - 2000)));
        }
        return text.toString();
    }

    private static WebArchive badWar(String name, Class<?> mdb) {
        return ShrinkWrap.create(WebArchive.class, name).addClasses(mdb)
                .addAsWebInfResource(new StringAsset(GlassFishMdbBindings.of(mdb)), "glassfish-ejb-jar.xml");
    }

    /**
     * The application-scoped resources: the connection factory over an XA pool of the adapter's connection
     * definition (connections to the test broker), and with {@code withDatabase} an XA data source of an in-memory
     * Derby database.
     */
    static String resources(boolean withDatabase) {
        String database = !withDatabase ? "" : """
                    <jdbc-connection-pool name="java:app/millrace-it-db" res-type="javax.sql.XADataSource"
                            datasource-classname="org.apache.derby.jdbc.EmbeddedXADataSource">
                        <property name="databaseName" value="memory:millrace-it"/>
                        <property name="connectionAttributes" value=";create=true"/>
                    </jdbc-connection-pool>
                    <jdbc-resource pool-name="java:app/millrace-it-db" jndi-name="%s"/>
                """.formatted(DATA_SOURCE_JNDI);
        return """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE resources PUBLIC "-//GlassFish.org//DTD GlassFish Application Server 3.1 Resource Definitions//EN"
                        "http://glassfish.org/dtds/glassfish-resources_1_5.dtd">
                <resources>
                    <connector-connection-pool name="java:app/millrace-pool" resource-adapter-name="%s"
                            connection-definition-name="jakarta.jms.ConnectionFactory"
                            transaction-support="XATransaction" steady-pool-size="0" max-pool-size="20">
                        <property name="brokers" value="%s"/>
                    </connector-connection-pool>
                    <connector-resource pool-name="java:app/millrace-pool" jndi-name="%s"/>
                %s</resources>
                """.formatted(ADAPTER, MillraceBrokerExtension.bootstrap(), FACTORY_JNDI, database);
    }
}
