package dev.millrace.ra.it;

import java.net.URL;
import java.util.Map;

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
 * The resource adapter in a real WildFly ({@code standalone-full}, started by Arquillian) against a real Millrace
 * broker in this JVM ({@link MillraceBrokerExtension}): the .rar is deployed as Maven built it, then an application
 * with message-driven beans, a stateless bean that sends and a servlet to call it. Every MDB binds to the adapter
 * (the server's default, {@code -Dejb.resource-adapter-name=millrace-ra.rar}); the connection factory is the one of
 * the .rar's {@code ironjacamar.xml}, the XA data source WildFly's H2 ({@code it/it-ds.xml}). The scenarios are
 * {@link ResourceAdapterScenarios}'.
 */
@ExtendWith({MillraceBrokerExtension.class, ArquillianExtension.class})
@RunAsClient
class WildFlyResourceAdapterIT extends ResourceAdapterScenarios {

    private static final Map<String, String> LOOKUPS = Map.of(
            AppResources.CONNECTION_FACTORY, "java:/jms/millrace/ConnectionFactory",
            AppResources.DATA_SOURCE, "java:jboss/datasources/MillraceItXA");

    private static final Map<String, String> FACTORY_ONLY = Map.of(
            AppResources.CONNECTION_FACTORY, "java:/jms/millrace/ConnectionFactory");

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
        return appWar("millrace-it.war", LOOKUPS, APP_CLASSES).addAsWebInfResource("it/it-ds.xml", "it-ds.xml");
    }

    @Deployment(name = "bad-selector", managed = false, testable = false)
    static WebArchive badSelector() {
        return ShrinkWrap.create(WebArchive.class, "bad-selector.war").addClasses(BadSelectorMdb.class);
    }

    @Deployment(name = "load-app", managed = false, testable = false)
    static WebArchive loadApp() {
        return appWar("millrace-load-it.war", FACTORY_ONLY, LoadMdb.class, Forwarding.class, AppResources.class);
    }

    @Deployment(name = "topic-app", managed = false, testable = false)
    static WebArchive topicApp() {
        return appWar("millrace-topic-it.war", FACTORY_ONLY, DurableTopicMdb.class, AppResources.class);
    }

    /**
     * The application that defines its own connection factory and queue: WildFly makes a new adapter instance for
     * each definition from the application's class loader, which must see the .rar's module (else IronJacamar's
     * validator reports "A ResourceAdapter must be a non-null instance").
     */
    @Deployment(name = "defined-app", managed = false, testable = false)
    static WebArchive definedApp() {
        return ShrinkWrap.create(WebArchive.class, "millrace-defined-it.war")
                .addClasses(DefinedResourcesBean.class, DefinedServlet.class, DefinedQueueMdb.class)
                .addAsWebInfResource(new StringAsset("""
                        <jboss-deployment-structure>
                            <deployment>
                                <dependencies>
                                    <module name="deployment.millrace-ra.rar"/>
                                </dependencies>
                            </deployment>
                        </jboss-deployment-structure>
                        """), "jboss-deployment-structure.xml");
    }

    @Deployment(name = "bad-type", managed = false, testable = false)
    static WebArchive badType() {
        return ShrinkWrap.create(WebArchive.class, "bad-type.war").addClasses(BadDestinationTypeMdb.class);
    }

    @Deployment(name = "bad-max", managed = false, testable = false)
    static WebArchive badMaxSession() {
        return ShrinkWrap.create(WebArchive.class, "bad-max.war").addClasses(BadMaxSessionMdb.class);
    }
}
