package dev.millrace.jms.jndi;

import java.util.Enumeration;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.Map;

import javax.naming.Context;
import javax.naming.Name;
import javax.naming.RefAddr;
import javax.naming.Reference;
import javax.naming.spi.ObjectFactory;

import dev.millrace.jms.MillraceConnectionFactory;
import dev.millrace.jms.MillraceXAConnectionFactory;

/**
 * Rebuilds a {@link MillraceConnectionFactory} from the JNDI {@link Reference} it bound itself as: every string
 * address is an option, by its property name. Returns {@code null} for references of other classes, as
 * {@link ObjectFactory} requires. Stateless and thread-safe.
 */
public class ConnectionFactoryObjectFactory implements ObjectFactory {

    @Override
    public Object getObjectInstance(Object obj, Name name, Context nameCtx, Hashtable<?, ?> environment) {
        if (!(obj instanceof Reference reference)) {
            return null;
        }
        boolean xa = MillraceXAConnectionFactory.class.getName().equals(reference.getClassName());
        if (!xa && !MillraceConnectionFactory.class.getName().equals(reference.getClassName())) {
            return null;
        }
        Map<String, String> options = new HashMap<>();
        Enumeration<RefAddr> addresses = ((Reference) obj).getAll();
        while (addresses.hasMoreElements()) {
            RefAddr address = addresses.nextElement();
            options.put(address.getType(), (String) address.getContent());
        }
        MillraceConnectionFactory factory = xa ? new MillraceXAConnectionFactory() : new MillraceConnectionFactory();
        factory.setProperties(options);
        return factory;
    }
}
