package dev.millrace.broker.config;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import jakarta.validation.ConstraintViolation;
import jakarta.validation.Validation;
import jakarta.validation.Validator;
import jakarta.validation.ValidatorFactory;
import org.hibernate.validator.messageinterpolation.ParameterMessageInterpolator;

/**
 * Reads broker settings from a properties file and overrides (the command line's), over the defaults
 * in {@link BrokerConfig}, and validates them with Hibernate Validator. Every problem is collected
 * and reported together, each by its setting name: unknown settings (with the known names), values
 * of the wrong type, constraint violations with the value given, and the cross-checks of the cluster
 * settings ({@link ClusterSettings}: the voters list, node.id among the voters, the voter address).
 *
 * <p>Stateless; thread-safe.
 */
public final class BrokerConfigLoader {

    private static final Map<String, Field> FIELDS = settingFields();

    private BrokerConfigLoader() {
    }

    /** Loads {@code file} (may be null: defaults only) and then {@code overrides}. */
    public static BrokerConfig load(File file, Map<String, String> overrides) {
        Map<String, String> values = new LinkedHashMap<>();
        if (file != null) {
            values.putAll(readFile(file));
        }
        values.putAll(overrides);
        return fromMap(values);
    }

    /** Builds and validates a config from setting names to values. */
    public static BrokerConfig fromMap(Map<String, String> values) {
        BrokerConfig config = new BrokerConfig();
        List<String> problems = new ArrayList<>();
        Set<String> given = new HashSet<>();
        for (Map.Entry<String, String> e : values.entrySet()) {
            String name = e.getKey().trim();
            if (name.startsWith(ListenerSettings.LISTENER_PREFIX)) {
                config.listenerOverrides.put(name, e.getValue().trim());
                given.add(name);
                continue;
            }
            Field field = FIELDS.get(name);
            if (field == null) {
                problems.add("unknown setting '" + e.getKey() + "'; known settings: " + String.join(", ", FIELDS.keySet()));
                continue;
            }
            given.add(e.getKey().trim());
            try {
                field.set(config, convert(field.getType(), e.getValue().trim()));
            } catch (IllegalArgumentException ex) {
                problems.add(e.getKey() + ": '" + e.getValue() + "' is not " + typeName(field.getType()));
            } catch (IllegalAccessException ex) {
                throw new IllegalStateException(ex);
            }
        }
        problems.addAll(validate(config));
        problems.addAll(ClusterSettings.checkAndResolve(config, given));
        problems.addAll(ListenerSettings.checkAndResolve(config));
        if (!problems.isEmpty()) {
            throw new ConfigurationException(problems);
        }
        return config;
    }

    /** Every setting's name, value in {@code config}, and documentation, in declaration order. */
    public static List<SettingValue> values(BrokerConfig config) {
        List<SettingValue> out = new java.util.ArrayList<>();
        for (Map.Entry<String, Field> e : FIELDS.entrySet()) {
            try {
                Object value = e.getValue().get(config);
                Setting setting = e.getValue().getAnnotation(Setting.class);
                out.add(new SettingValue(e.getKey(), value == null || setting.sensitive() ? null
                        : String.valueOf(value), setting.doc(), setting.sensitive()));
            } catch (IllegalAccessException ex) {
                throw new IllegalStateException(ex);
            }
        }
        return out;
    }

    /** One setting as DescribeConfigs of the broker shows it. */
    public record SettingValue(String name, String value, String doc, boolean sensitive) {
        /** A setting that is not a password or key. */
        public SettingValue(String name, String value, String doc) {
            this(name, value, doc, false);
        }
    }

    /** Every setting with its default and documentation, for --help and generated docs. */
    public static String describeSettings() {
        BrokerConfig defaults = new BrokerConfig();
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, Field> e : FIELDS.entrySet()) {
            try {
                Field field = e.getValue();
                out.append(String.format("  %-30s %s (default: %s)%n", e.getKey(),
                        field.getAnnotation(Setting.class).doc(), field.get(defaults)));
            } catch (IllegalAccessException ex) {
                throw new IllegalStateException(ex);
            }
        }
        return out.toString();
    }

    private static List<String> validate(BrokerConfig config) {
        try (ValidatorFactory factory = Validation.byDefaultProvider().configure()
                .messageInterpolator(new ParameterMessageInterpolator()).buildValidatorFactory()) {
            Validator validator = factory.getValidator();
            Set<ConstraintViolation<BrokerConfig>> violations = validator.validate(config);
            List<String> problems = new ArrayList<>();
            violations.stream().sorted(Comparator.comparing(v -> v.getPropertyPath().toString())).forEach(v -> {
                String name = settingName(v.getPropertyPath().toString());
                problems.add(name + ": " + v.getMessage() + " (was " + v.getInvalidValue() + ")");
            });
            return problems;
        }
    }

    private static String settingName(String fieldName) {
        for (Map.Entry<String, Field> e : FIELDS.entrySet()) {
            if (e.getValue().getName().equals(fieldName)) {
                return e.getKey();
            }
        }
        return fieldName;
    }

    private static Object convert(Class<?> type, String value) {
        if (type == int.class) {
            return Integer.parseInt(value);
        }
        if (type == long.class) {
            return Long.parseLong(value);
        }
        if (type == boolean.class) {
            if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
                throw new IllegalArgumentException(value);
            }
            return Boolean.parseBoolean(value);
        }
        return value;
    }

    private static String typeName(Class<?> type) {
        return type == int.class || type == long.class ? "a whole number" : type == boolean.class ? "true or false"
                : "text";
    }

    private static Map<String, String> readFile(File file) {
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(file.toPath())) {
            properties.load(in);
        } catch (IOException e) {
            throw new ConfigurationException(List.of("config file " + file + ": cannot be read: " + e.getMessage()));
        }
        Map<String, String> values = new LinkedHashMap<>();
        for (String name : properties.stringPropertyNames()) {
            values.put(name, properties.getProperty(name));
        }
        return values;
    }

    private static Map<String, Field> settingFields() {
        Map<String, Field> fields = new LinkedHashMap<>();
        for (Field field : BrokerConfig.class.getDeclaredFields()) {
            Setting setting = field.getAnnotation(Setting.class);
            if (setting != null) {
                field.setAccessible(true);
                fields.put(setting.name(), field);
            }
        }
        return fields;
    }
}
