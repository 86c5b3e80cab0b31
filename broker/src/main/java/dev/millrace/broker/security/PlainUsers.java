package dev.millrace.broker.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import javax.security.auth.login.AppConfigurationEntry;

import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.JaasContext;
import org.apache.kafka.common.security.plain.PlainLoginModule;

import dev.millrace.broker.config.ConfigurationException;

/**
 * The PLAIN users of one listener, read as Kafka brokers read them: from the listener's
 * {@code listener.name.<listener>.plain.sasl.jaas.config}, whose {@code PlainLoginModule} entry holds one option
 * {@code user_<name>="<password>"} per user:
 *
 * <pre>
 *   org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="b0b";
 * </pre>
 *
 * The JAAS text is parsed by kafka-clients ({@link JaasContext}).
 *
 * <p>Immutable; thread-safe.
 */
final class PlainUsers {

    private static final String USER_PREFIX = "user_";

    private final Map<String, byte[]> passwords;

    private PlainUsers(Map<String, byte[]> passwords) {
        this.passwords = passwords;
    }

    /**
     * Parses {@code jaasConfig}, the value of {@code setting}.
     *
     * @throws ConfigurationException naming {@code setting} when the text does not parse or has no PlainLoginModule
     */
    static PlainUsers parse(String setting, ListenerName listener, String jaasConfig) {
        List<AppConfigurationEntry> entries;
        try {
            // kafka-clients looks the JAAS text up without the listener prefix (Kafka strips it before)
            entries = JaasContext.loadServerContext(listener, "PLAIN", Map.of("plain.sasl.jaas.config",
                            new Password(jaasConfig)))
                    .configurationEntries();
        } catch (RuntimeException e) {
            throw new ConfigurationException(List.of(setting + ": " + e.getMessage()));
        }
        Map<String, byte[]> passwords = new HashMap<>();
        boolean plainModule = false;
        for (AppConfigurationEntry entry : entries) {
            if (!entry.getLoginModuleName().equals(PlainLoginModule.class.getName())) {
                continue;
            }
            plainModule = true;
            entry.getOptions().forEach((key, value) -> {
                if (key.startsWith(USER_PREFIX) && key.length() > USER_PREFIX.length()) {
                    passwords.put(key.substring(USER_PREFIX.length()),
                            String.valueOf(value).getBytes(StandardCharsets.UTF_8));
                }
            });
        }
        if (!plainModule) {
            throw new ConfigurationException(List.of(setting + ": has no " + PlainLoginModule.class.getName()
                    + " entry"));
        }
        return new PlainUsers(Map.copyOf(passwords));
    }

    /** Whether {@code user} exists and {@code password} is its password (compared in constant time). */
    boolean authenticate(String user, char[] password) {
        byte[] expected = passwords.get(user);
        byte[] given = new String(password).getBytes(StandardCharsets.UTF_8);
        return expected != null && MessageDigest.isEqual(expected, given);
    }

    int size() {
        return passwords.size();
    }
}
