package dev.millrace.samples.plainjms;

import java.util.Hashtable;

import javax.naming.Context;
import javax.naming.InitialContext;
import javax.naming.NamingException;

/**
 * Opens the JNDI context of {@code jndi.properties}. Everything Millrace-specific lives in that file; the only
 * override is the brokers address from the command line, passed in the {@code InitialContext} environment, which JNDI
 * gives precedence over {@code jndi.properties}. Stateless.
 */
final class Jndi {

    static final String CONNECTION_FACTORY_ENTRY = "connectionFactory.ConnectionFactory";

    private Jndi() {
    }

    /** @param brokers {@code host:port[,host:port]}, or null for the address in {@code jndi.properties} */
    static Context open(String brokers) throws NamingException {
        Hashtable<String, Object> environment = new Hashtable<>();
        if (brokers != null) {
            environment.put(CONNECTION_FACTORY_ENTRY, brokers);
        }
        return new InitialContext(environment);
    }
}
