package dev.millrace.broker.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class AclAuthorizerTest {

    private static final KafkaPrincipal ALICE = new KafkaPrincipal("User", "alice");
    private static final KafkaPrincipal BOB = new KafkaPrincipal("User", "bob");

    private final List<AclBinding> acls = new ArrayList<>();
    private final AclAuthorizer authorizer = new AclAuthorizer(() -> acls,
            AclAuthorizer.parseSuperUsers("User:admin; User:CN=x"), false);

    @Test
    void shouldLetADenyBeatAnAllowAndMatchPrefixes() {
        acls.add(acl("orders-", PatternType.PREFIXED, "User:alice", "*", AclOperation.WRITE, AclPermissionType.ALLOW));
        acls.add(acl("orders-secret", PatternType.LITERAL, "User:*", "*", AclOperation.ALL, AclPermissionType.DENY));
        assertThat(write(ALICE, "orders-1")).isTrue();
        assertThat(write(ALICE, "orders-secret")).isFalse();
        assertThat(write(ALICE, "order")).isFalse();
        assertThat(write(BOB, "orders-1")).isFalse();
        assertThat(authorizer.authorize(ALICE, "10.0.0.1", AclOperation.DESCRIBE, ResourceType.TOPIC, "orders-1"))
                .as("WRITE implies DESCRIBE").isTrue();
        assertThat(authorizer.authorize(ALICE, "10.0.0.1", AclOperation.READ, ResourceType.TOPIC, "orders-1"))
                .isFalse();
        assertThat(authorizer.authorize(ALICE, "10.0.0.1", AclOperation.WRITE, ResourceType.GROUP, "orders-1"))
                .as("another resource type").isFalse();
    }

    @Test
    void shouldMatchWildcardsAndHosts() {
        acls.add(acl("*", PatternType.LITERAL, "User:*", "10.0.0.1", AclOperation.WRITE, AclPermissionType.ALLOW));
        assertThat(write(BOB, "anything")).isTrue();
        assertThat(authorizer.authorize(BOB, "10.0.0.2", AclOperation.WRITE, ResourceType.TOPIC, "anything"))
                .isFalse();
    }

    @Test
    void shouldAllowSuperUsersAndDecideUnnamedResourcesBySetting() {
        acls.add(acl("t", PatternType.LITERAL, "User:admin", "*", AclOperation.ALL, AclPermissionType.DENY));
        assertThat(write(new KafkaPrincipal("User", "admin"), "t")).isTrue();
        assertThat(write(new KafkaPrincipal("User", "CN=x"), "t")).isTrue();
        assertThat(write(ALICE, "unnamed")).isFalse();
        AclAuthorizer open = new AclAuthorizer(() -> acls, Set.of(), true);
        assertThat(open.authorize(ALICE, "h", AclOperation.WRITE, ResourceType.TOPIC, "unnamed")).isTrue();
        assertThat(open.authorize(ALICE, "h", AclOperation.WRITE, ResourceType.TOPIC, "t")).isFalse();
        assertThatThrownBy(() -> AclAuthorizer.parseSuperUsers("admin")).hasMessageContaining("'admin'");
    }

    private boolean write(KafkaPrincipal principal, String topic) {
        return authorizer.authorize(principal, "10.0.0.1", AclOperation.WRITE, ResourceType.TOPIC, topic);
    }

    private static AclBinding acl(String name, PatternType pattern, String principal, String host,
                                  AclOperation operation, AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(ResourceType.TOPIC, name, pattern),
                new AccessControlEntry(principal, host, operation, permission));
    }
}
