package dev.millrace.broker.config;

import java.util.List;

/** Invalid broker configuration: every problem found, each naming its setting. */
public final class ConfigurationException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final List<String> problems;

    public ConfigurationException(List<String> problems) {
        super("Invalid configuration:\n  " + String.join("\n  ", problems));
        this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
        return problems;
    }
}
