package dev.millrace.broker.config;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;

import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * The Kafka-protocol listeners: parses and cross-checks {@code listeners}, {@code advertised.listeners},
 * {@code listener.security.protocol.map}, {@code inter.broker.listener.name}, the TLS files SSL listeners need,
 * {@code sasl.enabled.mechanisms} and the {@code listener.name.<listener>.<mechanism>.sasl.jaas.config} and
 * {@code listener.name.<listener>.ssl.client.auth} settings,
 * with Kafka's names and formats:
 *
 * <pre>
 *  listeners                      = NAME://host:port[,NAME://host:port...]   (empty host: every interface)
 *  advertised.listeners           = NAME://host:port[,...]                    (a subset of the names)
 *  listener.security.protocol.map = NAME:PROTOCOL[,...]                       (PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL)
 * </pre>
 *
 * When {@code listeners} is empty the broker has one listener named PLAINTEXT on {@code host}:{@code port},
 * advertised as {@code advertised.host}:{@code advertised.port} (the embedded default); when it is set, those four
 * settings are not used.
 *
 * <p>Stateless; called by {@link BrokerConfigLoader} on a config that is still being built (one thread).
 */
public final class ListenerSettings {

    /** Prefix of the per-listener settings. */
    public static final String LISTENER_PREFIX = "listener.name.";

    private static final java.util.regex.Pattern ENDPOINT =
            java.util.regex.Pattern.compile("([A-Za-z0-9_]+)://(\\[[^\\]]*\\]|[^:\\[\\]]*):(-?[0-9]+)");
    private static final java.util.regex.Pattern NAME = java.util.regex.Pattern.compile("[A-Za-z0-9_]+");
    private static final Set<String> MECHANISMS = Set.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512");

    /**
     * One listener.
     *
     * @param name           the listener name, upper case (Kafka's {@code ListenerName})
     * @param host           the address bound; empty binds every interface
     * @param port           the port bound; 0 picks a free one
     * @param advertisedHost the host clients are told to use
     * @param advertisedPort the port clients are told to use; 0 means the bound port
     */
    public record Listener(String name, SecurityProtocol protocol, String host, int port, String advertisedHost,
                           int advertisedPort) {

        /** The port clients are told to use, given the port this listener really bound. */
        public int advertisedPort(int boundPort) {
            return advertisedPort == 0 ? boundPort : advertisedPort;
        }

        public boolean usesTls() {
            return protocol == SecurityProtocol.SSL || protocol == SecurityProtocol.SASL_SSL;
        }

        public boolean usesSasl() {
            return protocol == SecurityProtocol.SASL_PLAINTEXT || protocol == SecurityProtocol.SASL_SSL;
        }
    }

    private ListenerSettings() {
    }

    /** Checks the listener settings of {@code config} and stores the resolved listeners in it. */
    static List<String> checkAndResolve(BrokerConfig config) {
        List<String> problems = new ArrayList<>();
        Map<String, SecurityProtocol> protocols = protocolMap(config.listenerSecurityProtocolMap, problems);
        List<Listener> listeners = new ArrayList<>();
        if (config.listeners.isBlank()) {
            listeners.add(new Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, config.host, config.port,
                    config.advertisedHost(), config.advertisedPort));
        } else {
            Map<String, String[]> advertised = advertised(config, problems);
            Set<Integer> ports = new HashSet<>();
            for (String entry : split(config.listeners)) {
                Matcher m = ENDPOINT.matcher(entry);
                if (!m.matches()) {
                    problems.add("listeners: '" + entry + "' is not NAME://host:port");
                    continue;
                }
                String name = m.group(1).toUpperCase(Locale.ROOT);
                String host = unbracket(m.group(2));
                int port = parsePort(m.group(3));
                if (port < 0 || port > 65535) {
                    problems.add("listeners: port of '" + entry + "' must be 0..65535");
                    continue;
                }
                if (listeners.stream().anyMatch(l -> l.name().equals(name))) {
                    problems.add("listeners: listener name " + name + " appears twice");
                    continue;
                }
                if (port != 0 && !ports.add(port)) {
                    problems.add("listeners: port " + port + " is used by two listeners");
                }
                SecurityProtocol protocol = protocols.get(name);
                if (protocol == null) {
                    problems.add("listener.security.protocol.map: has no security protocol for listener " + name
                            + " of listeners (the map is " + config.listenerSecurityProtocolMap + ")");
                    continue;
                }
                String[] adv = advertised.remove(name);
                String advertisedHost = adv != null ? adv[0] : host.isEmpty() ? config.advertisedHost() : host;
                listeners.add(new Listener(name, protocol, host, port, advertisedHost,
                        adv != null ? Integer.parseInt(adv[1]) : 0));
            }
            for (String unknown : advertised.keySet()) {
                problems.add("advertised.listeners: listener " + unknown + " is not one of listeners ("
                        + config.listeners + ")");
            }
        }
        for (Listener l : listeners) {
            if (l.port() != 0 && l.port() == config.controllerPort && !config.listeners.isBlank()) {
                problems.add("listeners: port " + l.port() + " of listener " + l.name() + " is also controller.port; "
                        + "the Kafka listener and the metadata quorum need different ports");
            }
        }
        config.resolvedListeners = List.copyOf(listeners);
        checkInterBroker(config, listeners, problems);
        checkTls(config, listeners, problems);
        checkSasl(config, listeners, problems);
        return problems;
    }

    /** The listener of {@code inter.broker.listener.name}: that one, else the one named PLAINTEXT, else the first. */
    static Listener interBroker(BrokerConfig config) {
        List<Listener> listeners = config.resolvedListeners;
        String wanted = config.interBrokerListenerName.isBlank() ? "PLAINTEXT"
                : config.interBrokerListenerName.trim().toUpperCase(Locale.ROOT);
        return listeners.stream().filter(l -> l.name().equals(wanted)).findFirst().orElse(listeners.get(0));
    }

    /** The comma-separated items of {@code value}, trimmed, without empty ones. */
    public static List<String> split(String value) {
        return Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    private static void checkInterBroker(BrokerConfig config, List<Listener> listeners, List<String> problems) {
        if (listeners.isEmpty()) {
            return;
        }
        String wanted = config.interBrokerListenerName.trim().toUpperCase(Locale.ROOT);
        if (!wanted.isEmpty() && listeners.stream().noneMatch(l -> l.name().equals(wanted))) {
            problems.add("inter.broker.listener.name: " + wanted + " is not one of listeners (" + config.listeners
                    + ")");
            return;
        }
        Listener inter = interBroker(config);
        if (inter.usesSasl() && !config.saslEnabledMechanisms().isEmpty()) {
            String mechanism = config.saslMechanismInterBrokerProtocol();
            if (!config.saslEnabledMechanisms().contains(mechanism)) {
                problems.add("sasl.mechanism.inter.broker.protocol: " + mechanism + " is not one of "
                        + "sasl.enabled.mechanisms " + config.saslEnabledMechanisms() + " (the inter-broker listener "
                        + inter.name() + " is " + inter.protocol() + ")");
            }
        }
    }

    private static void checkTls(BrokerConfig config, List<Listener> listeners, List<String> problems) {
        List<String> tls = listeners.stream().filter(Listener::usesTls).map(Listener::name).toList();
        if (tls.isEmpty()) {
            return;
        }
        if (config.sslKeystoreLocation.isBlank()) {
            problems.add("ssl.keystore.location: must be set: listeners " + tls + " use TLS and need the broker's key "
                    + "and certificate");
        } else {
            checkFile("ssl.keystore.location", config.sslKeystoreLocation, problems);
        }
        if (!config.sslTruststoreLocation.isBlank()) {
            checkFile("ssl.truststore.location", config.sslTruststoreLocation, problems);
        } else if (!config.sslClientAuth.equals("none") || listeners.stream().filter(Listener::usesTls)
                .anyMatch(l -> !config.sslClientAuth(l.name()).equals("none"))) {
            problems.add("ssl.truststore.location: must be set when ssl.client.auth (of the broker or of a listener) is "
                    + "not none: it names the authorities whose client certificates are trusted");
        }
    }

    private static void checkFile(String setting, String location, List<String> problems) {
        File file = new File(location);
        if (!file.isFile() || !file.canRead()) {
            problems.add(setting + ": " + location + " is not a readable file");
        }
    }

    private static void checkSasl(BrokerConfig config, List<Listener> listeners, List<String> problems) {
        List<String> mechanisms = config.saslEnabledMechanisms();
        for (String mechanism : mechanisms) {
            if (!MECHANISMS.contains(mechanism)) {
                problems.add("sasl.enabled.mechanisms: unknown mechanism " + mechanism + "; this broker offers "
                        + String.join(", ", new java.util.TreeSet<>(MECHANISMS)));
            }
        }
        List<String> sasl = listeners.stream().filter(Listener::usesSasl).map(Listener::name).toList();
        if (!sasl.isEmpty() && mechanisms.isEmpty()) {
            problems.add("sasl.enabled.mechanisms: is empty, but listeners " + sasl + " authenticate with SASL");
        }
        Set<String> names = new HashSet<>();
        listeners.forEach(l -> names.add(l.name().toLowerCase(Locale.ROOT)));
        for (String key : config.listenerOverrides.keySet()) {
            String rest = key.substring(LISTENER_PREFIX.length());
            int dot = rest.indexOf('.');
            String listener = dot < 0 ? rest : rest.substring(0, dot);
            String setting = dot < 0 ? "" : rest.substring(dot + 1);
            if (!names.contains(listener)) {
                problems.add(key + ": " + listener + " is not the lower-case name of a listener of listeners");
                continue;
            }
            if (setting.equals("ssl.client.auth")) {
                String value = config.listenerOverrides.get(key);
                if (!value.matches("none|requested|required")) {
                    problems.add(key + ": must be none, requested or required (was " + value + ")");
                }
                continue;
            }
            String mechanism = setting.endsWith(".sasl.jaas.config")
                    ? setting.substring(0, setting.length() - ".sasl.jaas.config".length()).toUpperCase(Locale.ROOT)
                    : null;
            if (mechanism == null || !MECHANISMS.contains(mechanism)) {
                problems.add("unknown setting '" + key + "'; per-listener settings are "
                        + "listener.name.<listener>.<plain|scram-sha-256|scram-sha-512>.sasl.jaas.config and "
                        + "listener.name.<listener>.ssl.client.auth");
            }
        }
    }

    private static Map<String, SecurityProtocol> protocolMap(String value, List<String> problems) {
        Map<String, SecurityProtocol> map = new LinkedHashMap<>();
        for (String entry : split(value)) {
            int colon = entry.indexOf(':');
            String name = colon < 0 ? "" : entry.substring(0, colon).trim().toUpperCase(Locale.ROOT);
            if (colon < 0 || !NAME.matcher(name).matches()) {
                problems.add("listener.security.protocol.map: '" + entry + "' is not NAME:PROTOCOL");
                continue;
            }
            String protocol = entry.substring(colon + 1).trim().toUpperCase(Locale.ROOT);
            try {
                map.put(name, SecurityProtocol.forName(protocol));
            } catch (IllegalArgumentException e) {
                problems.add("listener.security.protocol.map: unknown security protocol '" + protocol + "' for "
                        + "listener " + name + "; known: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL");
            }
        }
        return map;
    }

    /** advertised.listeners by name: {host, port}. */
    private static Map<String, String[]> advertised(BrokerConfig config, List<String> problems) {
        Map<String, String[]> advertised = new LinkedHashMap<>();
        for (String entry : split(config.advertisedListeners)) {
            Matcher m = ENDPOINT.matcher(entry);
            int port = m.matches() ? parsePort(m.group(3)) : -1;
            if (!m.matches() || unbracket(m.group(2)).isEmpty() || port < 1 || port > 65535) {
                problems.add("advertised.listeners: '" + entry + "' is not NAME://host:port with a host and a port "
                        + "in 1..65535");
                continue;
            }
            advertised.put(m.group(1).toUpperCase(Locale.ROOT), new String[] {unbracket(m.group(2)),
                String.valueOf(port)});
        }
        return advertised;
    }

    private static int parsePort(String text) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static String unbracket(String host) {
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }
}
