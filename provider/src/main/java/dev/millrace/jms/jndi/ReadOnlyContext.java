package dev.millrace.jms.jndi;

import java.util.Hashtable;
import java.util.Map;

import javax.naming.Binding;
import javax.naming.CompositeName;
import javax.naming.Context;
import javax.naming.Name;
import javax.naming.NameClassPair;
import javax.naming.NameNotFoundException;
import javax.naming.NameParser;
import javax.naming.NamingEnumeration;
import javax.naming.NamingException;
import javax.naming.OperationNotSupportedException;

import dev.millrace.jms.MillraceQueue;
import dev.millrace.jms.MillraceTopic;

/**
 * The context {@link MillraceInitialContextFactory} returns: fixed bindings plus the {@code dynamicQueues/} and
 * {@code dynamicTopics/} namespaces. Every modifying operation throws {@link OperationNotSupportedException}.
 * Thread-safe (the bindings never change).
 */
final class ReadOnlyContext implements Context {

    static final String DYNAMIC_QUEUES = "dynamicQueues/";
    static final String DYNAMIC_TOPICS = "dynamicTopics/";

    private final Map<String, Object> bindings;
    private final Hashtable<Object, Object> environment;

    ReadOnlyContext(Map<String, Object> bindings, Hashtable<Object, Object> environment) {
        this.bindings = Map.copyOf(bindings);
        this.environment = environment;
    }

    @Override
    public Object lookup(String name) throws NamingException {
        if (name.isEmpty()) {
            return this;
        }
        Object bound = bindings.get(name);
        if (bound != null) {
            return bound;
        }
        try {
            if (name.startsWith(DYNAMIC_QUEUES)) {
                return new MillraceQueue(name.substring(DYNAMIC_QUEUES.length()));
            }
            if (name.startsWith(DYNAMIC_TOPICS)) {
                return new MillraceTopic(name.substring(DYNAMIC_TOPICS.length()));
            }
        } catch (IllegalArgumentException e) {
            NamingException ne = new NamingException(name + ": " + e.getMessage());
            ne.setRootCause(e);
            throw ne;
        }
        throw new NameNotFoundException(name + " is not bound; bound names: " + bindings.keySet());
    }

    @Override
    public Object lookup(Name name) throws NamingException {
        return lookup(name.toString());
    }

    private static NamingException readOnly() {
        return new OperationNotSupportedException("this JNDI context is read-only; configure it in jndi.properties");
    }

    @Override
    public void bind(Name name, Object obj) throws NamingException {
        throw readOnly();
    }

    @Override
    public void bind(String name, Object obj) throws NamingException {
        throw readOnly();
    }

    @Override
    public void rebind(Name name, Object obj) throws NamingException {
        throw readOnly();
    }

    @Override
    public void rebind(String name, Object obj) throws NamingException {
        throw readOnly();
    }

    @Override
    public void unbind(Name name) throws NamingException {
        throw readOnly();
    }

    @Override
    public void unbind(String name) throws NamingException {
        throw readOnly();
    }

    @Override
    public void rename(Name oldName, Name newName) throws NamingException {
        throw readOnly();
    }

    @Override
    public void rename(String oldName, String newName) throws NamingException {
        throw readOnly();
    }

    @Override
    public NamingEnumeration<NameClassPair> list(Name name) throws NamingException {
        throw new OperationNotSupportedException("listing is not supported");
    }

    @Override
    public NamingEnumeration<NameClassPair> list(String name) throws NamingException {
        throw new OperationNotSupportedException("listing is not supported");
    }

    @Override
    public NamingEnumeration<Binding> listBindings(Name name) throws NamingException {
        throw new OperationNotSupportedException("listing is not supported");
    }

    @Override
    public NamingEnumeration<Binding> listBindings(String name) throws NamingException {
        throw new OperationNotSupportedException("listing is not supported");
    }

    @Override
    public void destroySubcontext(Name name) throws NamingException {
        throw readOnly();
    }

    @Override
    public void destroySubcontext(String name) throws NamingException {
        throw readOnly();
    }

    @Override
    public Context createSubcontext(Name name) throws NamingException {
        throw readOnly();
    }

    @Override
    public Context createSubcontext(String name) throws NamingException {
        throw readOnly();
    }

    @Override
    public Object lookupLink(Name name) throws NamingException {
        return lookup(name);
    }

    @Override
    public Object lookupLink(String name) throws NamingException {
        return lookup(name);
    }

    @Override
    public NameParser getNameParser(Name name) {
        return CompositeName::new;
    }

    @Override
    public NameParser getNameParser(String name) {
        return CompositeName::new;
    }

    @Override
    public Name composeName(Name name, Name prefix) throws NamingException {
        return ((Name) prefix.clone()).addAll(name);
    }

    @Override
    public String composeName(String name, String prefix) {
        return prefix.isEmpty() ? name : prefix + "/" + name;
    }

    @Override
    public Object addToEnvironment(String propName, Object propVal) {
        return environment.put(propName, propVal);
    }

    @Override
    public Object removeFromEnvironment(String propName) {
        return environment.remove(propName);
    }

    @Override
    public Hashtable<?, ?> getEnvironment() {
        return new Hashtable<>(environment);
    }

    @Override
    public void close() {
    }

    @Override
    public String getNameInNamespace() {
        return "";
    }
}
