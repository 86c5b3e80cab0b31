package dev.millrace.ra.admin;

import java.util.Hashtable;

import javax.naming.Context;
import javax.naming.Name;
import javax.naming.RefAddr;
import javax.naming.Reference;
import javax.naming.spi.ObjectFactory;

/**
 * Rebuilds a {@link MillraceQueueAdminObject} or {@link MillraceTopicAdminObject} from the {@link Reference} that
 * {@link AdminDestination#getReference()} made: the reference's class name says which, its {@value #NAME_ADDRESS}
 * address holds the destination name. Returns null for any other reference, as {@link ObjectFactory} requires.
 * Stateless and thread-safe.
 */
public class AdminObjectFactory implements ObjectFactory {

    /** The {@link javax.naming.StringRefAddr} type holding the destination name. */
    public static final String NAME_ADDRESS = "name";

    @Override
    public Object getObjectInstance(Object obj, Name name, Context nameCtx, Hashtable<?, ?> environment) {
        if (!(obj instanceof Reference reference)) {
            return null;
        }
        RefAddr address = reference.get(NAME_ADDRESS);
        if (address == null) {
            return null;
        }
        AdminDestination destination;
        if (MillraceQueueAdminObject.class.getName().equals(reference.getClassName())) {
            destination = new MillraceQueueAdminObject();
        } else if (MillraceTopicAdminObject.class.getName().equals(reference.getClassName())) {
            destination = new MillraceTopicAdminObject();
        } else {
            return null;
        }
        if (address.getContent() != null) {
            destination.setName((String) address.getContent());
        }
        return destination;
    }
}
