package dev.millrace.jms.jndi;

import java.util.HashMap;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.Map;

import javax.naming.Context;
import javax.naming.NamingException;
import javax.naming.spi.InitialContextFactory;

import dev.millrace.jms.MillraceConnectionFactory;
import dev.millrace.jms.MillraceXAConnectionFactory;
import dev.millrace.jms.MillraceQueue;
import dev.millrace.jms.MillraceTopic;

/**
 * A JNDI {@link InitialContextFactory} configured from the environment (which includes {@code jndi.properties} on the
 * class path), in the convention of other providers:
 *
 * <pre>
 * java.naming.factory.initial = dev.millrace.jms.jndi.MillraceInitialContextFactory
 * connectionFactory.&lt;name&gt;    = host:port[,host:port...][?option=value&amp;option=value]
 * xaConnectionFactory.&lt;name&gt;  = the same, bound as a {@link MillraceXAConnectionFactory}
 * queue.&lt;jndiName&gt;            = &lt;queue name&gt;
 * topic.&lt;jndiName&gt;            = &lt;topic name&gt;
 * </pre>
 *
 * <p>Options after {@code ?} are {@link MillraceConnectionFactory} property names ({@code prefetch=10}). Without any
 * {@code connectionFactory.} entry, {@code ConnectionFactory} is bound to the brokers of
 * {@code java.naming.provider.url}, or {@code localhost:9092}. Lookups of {@code dynamicQueues/<name>} and
 * {@code dynamicTopics/<name>} make destinations without configuration. Bad entries fail {@code new InitialContext}
 * with a {@link NamingException} naming the entry. The context is read-only. Stateless and thread-safe.
 */
public class MillraceInitialContextFactory implements InitialContextFactory {

    public static final String CONNECTION_FACTORY_PREFIX = "connectionFactory.";
    public static final String XA_CONNECTION_FACTORY_PREFIX = "xaConnectionFactory.";
    public static final String QUEUE_PREFIX = "queue.";
    public static final String TOPIC_PREFIX = "topic.";

    @Override
    public Context getInitialContext(Hashtable<?, ?> environment) throws NamingException {
        Map<String, Object> bindings = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : environment.entrySet()) {
            String key = String.valueOf(e.getKey());
            String value = String.valueOf(e.getValue());
            try {
                if (key.startsWith(CONNECTION_FACTORY_PREFIX)) {
                    bindings.put(key.substring(CONNECTION_FACTORY_PREFIX.length()), connectionFactory(value));
                } else if (key.startsWith(XA_CONNECTION_FACTORY_PREFIX)) {
                    bindings.put(key.substring(XA_CONNECTION_FACTORY_PREFIX.length()),
                            configure(new MillraceXAConnectionFactory(), value));
                } else if (key.startsWith(QUEUE_PREFIX)) {
                    bindings.put(key.substring(QUEUE_PREFIX.length()), new MillraceQueue(value));
                } else if (key.startsWith(TOPIC_PREFIX)) {
                    bindings.put(key.substring(TOPIC_PREFIX.length()), new MillraceTopic(value));
                }
            } catch (IllegalArgumentException ex) {
                NamingException ne = new NamingException("JNDI entry " + key + "=" + value + ": " + ex.getMessage());
                ne.setRootCause(ex);
                throw ne;
            }
        }
        if (bindings.values().stream().noneMatch(b -> b instanceof MillraceConnectionFactory
                && !(b instanceof MillraceXAConnectionFactory))) {
            Object url = environment.get(Context.PROVIDER_URL);
            bindings.put("ConnectionFactory", url == null ? new MillraceConnectionFactory()
                    : connectionFactory(String.valueOf(url)));
        }
        return new ReadOnlyContext(bindings, new Hashtable<>(environment));
    }

    static MillraceConnectionFactory connectionFactory(String value) {
        return configure(new MillraceConnectionFactory(), value);
    }

    /** Sets {@code factory}'s brokers and options from {@code host:port[,...][?option=value&...]}. */
    private static <F extends MillraceConnectionFactory> F configure(F factory, String value) {
        int q = value.indexOf('?');
        factory.setBrokers(q < 0 ? value : value.substring(0, q));
        if (q >= 0) {
            Map<String, String> options = new HashMap<>();
            for (String pair : value.substring(q + 1).split("&")) {
                int eq = pair.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("option '" + pair + "' is not name=value");
                }
                options.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
            factory.setProperties(options);
        }
        return factory;
    }
}
