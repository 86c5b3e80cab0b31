package dev.millrace.broker.share;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A share group: its members and its epoch, which grows whenever an assignment changes. A group
 * with no members is {@code Empty}, otherwise {@code Stable}: assignments take effect at once
 * because share-group members need not give partitions up before others get them.
 *
 * <p>Guarded by the {@link ShareGroupCoordinator}'s monitor; not thread-safe on its own.
 */
final class ShareGroup {

    final String groupId;
    int groupEpoch;
    final Map<String, ShareGroupMember> members = new LinkedHashMap<>();

    ShareGroup(String groupId) {
        this.groupId = groupId;
    }

    String state() {
        return members.isEmpty() ? "Empty" : "Stable";
    }
}
