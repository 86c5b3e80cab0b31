package dev.millrace.broker.security;

import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.Supplier;

import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * Kafka's ACL semantics over the bindings of the metadata image. For a principal, host, operation and resource:
 * <ol>
 *   <li>a super user ({@code super.users}, {@code User:admin;User:CN=x}) is allowed;
 *   <li>the bindings that apply are those on the resource's type whose pattern matches its name (LITERAL: the same
 *       name or {@code *}; PREFIXED: a prefix of the name); when there is none, {@code allow.everyone.if.no.acl.found}
 *       decides;
 *   <li>of those, the ones for the principal (or {@code User:*}) and host (or {@code *}): a DENY of the operation or
 *       of ALL denies, whatever allows it;
 *   <li>otherwise an ALLOW of the operation, of ALL, or of an operation that implies it (READ, WRITE, DELETE and ALTER
 *       imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS) allows; nothing else does.
 * </ol>
 *
 * <p>Thread-safe: reads the current bindings on each call.
 */
public final class AclAuthorizer {

    private static final String WILDCARD_PRINCIPAL = "User:*";
    private static final String WILDCARD_HOST = "*";

    private final Supplier<? extends Collection<AclBinding>> acls;
    private final Set<String> superUsers;
    private final boolean allowEveryoneIfNoAclFound;

    public AclAuthorizer(Supplier<? extends Collection<AclBinding>> acls, Set<String> superUsers,
                         boolean allowEveryoneIfNoAclFound) {
        this.acls = acls;
        this.superUsers = Set.copyOf(superUsers);
        this.allowEveryoneIfNoAclFound = allowEveryoneIfNoAclFound;
    }

    /**
     * The principals of {@code super.users}: separated by {@code ;}, each {@code Type:name}.
     *
     * @throws IllegalArgumentException naming an entry that is not {@code Type:name}
     */
    public static Set<String> parseSuperUsers(String value) {
        Set<String> users = new LinkedHashSet<>();
        for (String entry : value.split(";")) {
            String user = entry.trim();
            if (user.isEmpty()) {
                continue;
            }
            int colon = user.indexOf(':');
            if (colon <= 0 || colon == user.length() - 1) {
                throw new IllegalArgumentException("super.users entry '" + user + "' is not of the form Type:name");
            }
            users.add(user);
        }
        return users;
    }

    public boolean authorize(KafkaPrincipal principal, String host, AclOperation operation, ResourceType type,
                             String name) {
        String user = principal.getPrincipalType() + ":" + principal.getName();
        if (superUsers.contains(user)) {
            return true;
        }
        boolean anyAcl = false;
        boolean allowed = false;
        for (AclBinding binding : acls.get()) {
            if (!matches(binding.pattern(), type, name)) {
                continue;
            }
            anyAcl = true;
            String who = binding.entry().principal();
            String from = binding.entry().host();
            if (!(who.equals(user) || who.equals(WILDCARD_PRINCIPAL))
                    || !(from.equals(host) || from.equals(WILDCARD_HOST))) {
                continue;
            }
            AclOperation granted = binding.entry().operation();
            if (binding.entry().permissionType() == AclPermissionType.DENY) {
                if (granted == operation || granted == AclOperation.ALL) {
                    return false;
                }
            } else if (implies(granted, operation)) {
                allowed = true;
            }
        }
        return anyAcl ? allowed : allowEveryoneIfNoAclFound;
    }

    private static boolean matches(ResourcePattern pattern, ResourceType type, String name) {
        if (pattern.resourceType() != type) {
            return false;
        }
        if (pattern.patternType() == PatternType.LITERAL) {
            return pattern.name().equals(name) || pattern.name().equals(ResourcePattern.WILDCARD_RESOURCE);
        }
        return pattern.patternType() == PatternType.PREFIXED && name.startsWith(pattern.name());
    }

    private static boolean implies(AclOperation granted, AclOperation wanted) {
        if (granted == wanted || granted == AclOperation.ALL) {
            return true;
        }
        if (wanted == AclOperation.DESCRIBE) {
            return granted == AclOperation.READ || granted == AclOperation.WRITE || granted == AclOperation.DELETE
                    || granted == AclOperation.ALTER;
        }
        return wanted == AclOperation.DESCRIBE_CONFIGS && granted == AclOperation.ALTER_CONFIGS;
    }
}
