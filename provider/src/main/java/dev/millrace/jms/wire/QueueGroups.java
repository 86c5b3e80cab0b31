package dev.millrace.jms.wire;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.JmsExceptions;
import jakarta.jms.JMSException;

/**
 * Configures the share group of a queue before this connection first consumes from it, whatever the broker's
 * defaults: {@code share.auto.offset.reset=earliest} (a queue keeps messages sent before its first consumer) and
 * {@code share.isolation.level=read_committed} (messages of open or aborted transactions are never delivered).
 * Once per group per connection; setting the same values again is harmless. Queue consumers get the same settings
 * from {@link DestinationSetup} (in its one describe and alter); this is for queues that skip it: temporary queues and
 * browsers.
 *
 * <p>Thread-safe.
 */
public final class QueueGroups {

    /** The settings every queue's share group gets, whatever its policy. */
    static final Map<String, String> QUEUE_SETTINGS = Map.of(
            "share.auto.offset.reset", "earliest",
            "share.isolation.level", "read_committed");

    private final Admin admin;
    private final ConnectionSettings settings;
    private final Set<String> configured = ConcurrentHashMap.newKeySet();

    public QueueGroups(Admin admin, ConnectionSettings settings) {
        this.admin = admin;
        this.settings = settings;
    }

    public void configure(String group) throws JMSException {
        if (configured.contains(group)) {
            return;
        }
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        List<AlterConfigOp> ops = new java.util.ArrayList<>();
        QUEUE_SETTINGS.forEach((key, value) -> ops.add(new AlterConfigOp(new ConfigEntry(key, value),
                AlterConfigOp.OpType.SET)));
        try {
            admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get(settings.blockingTimeoutMs(),
                    TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("configure the share group " + group + " of a queue", e);
        }
        configured.add(group);
    }
}
