package dev.millrace.broker.controller;

import java.util.Collection;
import java.util.Map;

import org.apache.kafka.common.errors.InvalidConfigurationException;

/**
 * What settings a group ({@code GROUP} config resource) may have: the active controller asks it before it writes
 * {@link MetadataRecord.GroupConfigRecord}s, so that a bad setting is refused wherever the change was sent. The
 * broker provides it (its share-group settings and their defaults); the controller knows no setting by itself.
 *
 * <p>Implementations are stateless and thread-safe; called on the controller's event thread, they must not block.
 */
@FunctionalInterface
public interface GroupConfigPolicy {

    /**
     * The group's whole settings after {@code set} (name to value) and {@code delete} (names back to the default) are
     * applied to {@code current}, values normalised as they are to be stored.
     *
     * @throws InvalidConfigurationException naming the group, the setting and the value when the change is not valid
     *         (an unknown name, a bad value, a combination that cannot hold)
     * @throws org.apache.kafka.common.errors.ApiException of another error (such as INVALID_GROUP_ID)
     */
    Map<String, String> apply(String groupId, Map<String, String> current, Map<String, String> set,
                              Collection<String> delete);

    /** Knows no setting: every change is INVALID_CONFIG. The default of a controller outside a broker. */
    GroupConfigPolicy NONE = (groupId, current, set, delete) -> {
        throw new InvalidConfigurationException("Group " + groupId + ": this controller knows no group config");
    };
}
