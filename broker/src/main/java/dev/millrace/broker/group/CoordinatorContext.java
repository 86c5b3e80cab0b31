package dev.millrace.broker.group;

import java.util.Objects;

import dev.millrace.broker.coordinator.ReplicationAwaiter;
import dev.millrace.delay.Time;
import dev.millrace.delay.Timer;

/**
 * What every {@link GroupShard} of one coordinator shares: settings, the offsets topic, the topic-id
 * lookup, the wait for the in-sync replicas, the timing wheel and the clock. Immutable; thread-safe as its parts
 * are.
 */
record CoordinatorContext(GroupCoordinatorConfig config, OffsetsTopic offsetsTopic, TopicIds topicIds,
                          ReplicationAwaiter replication, Timer timer, Time time) {

    CoordinatorContext {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(offsetsTopic, "offsetsTopic");
        Objects.requireNonNull(topicIds, "topicIds");
        Objects.requireNonNull(replication, "replication");
        Objects.requireNonNull(timer, "timer");
        Objects.requireNonNull(time, "time");
    }
}
