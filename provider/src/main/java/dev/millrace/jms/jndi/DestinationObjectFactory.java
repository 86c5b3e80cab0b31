package dev.millrace.jms.jndi;

import java.util.Hashtable;

import javax.naming.Context;
import javax.naming.Name;
import javax.naming.RefAddr;
import javax.naming.Reference;
import javax.naming.spi.ObjectFactory;

import dev.millrace.jms.MillraceQueue;
import dev.millrace.jms.MillraceTopic;

/**
 * Rebuilds a {@link MillraceQueue} or {@link MillraceTopic} from the JNDI {@link Reference} it bound itself as: the
 * reference's class name says which, and its {@value #NAME_ADDRESS} address holds the destination name. Returns
 * {@code null} for references it does not know, as {@link ObjectFactory} requires. Stateless and thread-safe.
 */
public class DestinationObjectFactory implements ObjectFactory {

    /** The {@link javax.naming.StringRefAddr} type holding the destination name. */
    public static final String NAME_ADDRESS = "name";

    @Override
    public Object getObjectInstance(Object obj, Name name, Context nameCtx, Hashtable<?, ?> environment) {
        if (!(obj instanceof Reference)) {
            return null;
        }
        Reference reference = (Reference) obj;
        RefAddr address = reference.get(NAME_ADDRESS);
        if (address == null) {
            return null;
        }
        String destinationName = (String) address.getContent();
        if (MillraceQueue.class.getName().equals(reference.getClassName())) {
            return new MillraceQueue(destinationName);
        }
        if (MillraceTopic.class.getName().equals(reference.getClassName())) {
            return new MillraceTopic(destinationName);
        }
        return null;
    }
}
