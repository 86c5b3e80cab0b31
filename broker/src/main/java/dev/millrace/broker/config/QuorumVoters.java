package dev.millrace.broker.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;

/**
 * The metadata quorum's voters: setting {@code controller.quorum.voters}, Kafka's
 * {@code id@host:port[,id@host:port...]} list, in the order written. Each voter is a node id and the
 * address its Raft voter listens on; every node of a cluster must be given the same list.
 *
 * <p>{@link #parse} reports every malformed entry at once, each message naming the setting and the
 * entry: not of the form {@code id@host:port}, an id that is not a whole number >= 0, a port outside
 * 1..65535, an id or an address given twice. An empty setting is not parsed here: it means embedded
 * mode, where {@link #single} describes the one voter.
 *
 * <p>Immutable; thread-safe.
 */
public final class QuorumVoters {

    /** The setting this class parses, as the configuration file names it. */
    public static final String SETTING = "controller.quorum.voters";

    private final Map<Integer, HostPort> voters;

    private QuorumVoters(Map<Integer, HostPort> voters) {
        this.voters = Collections.unmodifiableMap(new LinkedHashMap<>(voters));
    }

    /** The single voter of embedded mode. */
    public static QuorumVoters single(int nodeId, String host, int port) {
        return new QuorumVoters(Map.of(nodeId, new HostPort(host, port)));
    }

    /**
     * Parses a non-empty {@code id@host:port[,...]} list.
     *
     * @throws ConfigurationException naming {@value #SETTING} and each bad entry
     */
    public static QuorumVoters parse(String value) {
        List<String> problems = new ArrayList<>();
        Map<Integer, HostPort> voters = new LinkedHashMap<>();
        Map<String, Integer> idByAddress = new LinkedHashMap<>();
        if (value == null || value.isBlank()) {
            throw new ConfigurationException(List.of(SETTING + ": is empty; give id@host:port[,id@host:port...]"));
        }
        for (String raw : value.split(",", -1)) {
            String entry = raw.trim();
            String problem = checkEntry(entry);
            if (problem != null) {
                problems.add(SETTING + ": entry '" + entry + "' " + problem);
                continue;
            }
            int at = entry.indexOf('@');
            int colon = entry.lastIndexOf(':');
            int id = Integer.parseInt(entry.substring(0, at));
            HostPort address = new HostPort(entry.substring(at + 1, colon), Integer.parseInt(entry.substring(colon + 1)));
            String addressKey = address.toString().toLowerCase(Locale.ROOT);
            if (voters.containsKey(id)) {
                problems.add(SETTING + ": entry '" + entry + "' repeats node id " + id + " (already "
                        + id + "@" + voters.get(id) + ")");
            } else if (idByAddress.containsKey(addressKey)) {
                problems.add(SETTING + ": entry '" + entry + "' repeats address " + address + " (already node "
                        + idByAddress.get(addressKey) + ")");
            } else {
                voters.put(id, address);
                idByAddress.put(addressKey, id);
            }
        }
        if (!problems.isEmpty()) {
            throw new ConfigurationException(problems);
        }
        return new QuorumVoters(voters);
    }

    /** Why {@code entry} is not {@code id@host:port} with a valid id and port, or null when it is. */
    private static String checkEntry(String entry) {
        int at = entry.indexOf('@');
        int colon = entry.lastIndexOf(':');
        if (at <= 0 || colon < at + 2 || colon == entry.length() - 1 || entry.chars().anyMatch(Character::isWhitespace)) {
            return "is not id@host:port";
        }
        String id = entry.substring(0, at);
        if (!id.chars().allMatch(c -> c >= '0' && c <= '9') || !fitsInt(id)) {
            return "has node id '" + id + "', which is not a whole number >= 0";
        }
        String port = entry.substring(colon + 1);
        if (!port.chars().allMatch(c -> c >= '0' && c <= '9') || !fitsInt(port)
                || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
            return "has port '" + port + "', which is not 1..65535";
        }
        return null;
    }

    private static boolean fitsInt(String digits) {
        try {
            Integer.parseInt(digits);
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** Node id to voter address, in the order of the setting. */
    public Map<Integer, HostPort> voters() {
        return voters;
    }

    /** Node id to {@code "host:port"}, in the order of the setting (the controller's form). */
    public Map<Integer, String> hostPorts() {
        Map<Integer, String> out = new LinkedHashMap<>();
        voters.forEach((id, address) -> out.put(id, address.toString()));
        return Collections.unmodifiableMap(out);
    }

    public Set<Integer> nodeIds() {
        return voters.keySet();
    }

    public boolean contains(int nodeId) {
        return voters.containsKey(nodeId);
    }

    /** The address of voter {@code nodeId}. @throws IllegalArgumentException when it is not a voter */
    public HostPort address(int nodeId) {
        HostPort address = voters.get(nodeId);
        if (address == null) {
            throw new IllegalArgumentException("node " + nodeId + " is not a voter of " + this);
        }
        return address;
    }

    public int size() {
        return voters.size();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof QuorumVoters other && voters.equals(other.voters)
                && List.copyOf(voters.keySet()).equals(List.copyOf(other.voters.keySet()));
    }

    @Override
    public int hashCode() {
        return voters.hashCode();
    }

    /** The setting's form: {@code id@host:port,...}. */
    @Override
    public String toString() {
        StringJoiner out = new StringJoiner(",");
        voters.forEach((id, address) -> out.add(id + "@" + address));
        return out.toString();
    }
}
