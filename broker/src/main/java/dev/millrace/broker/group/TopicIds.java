package dev.millrace.broker.group;

import java.util.Optional;

import org.apache.kafka.common.Uuid;

/**
 * Translates between topic ids and names for OffsetCommit and OffsetFetch version 10 and later,
 * which name topics by id only. Offsets are stored by topic name, so a commit or fetch for an id
 * that this lookup does not know is answered with {@code UNKNOWN_TOPIC_ID}.
 *
 * <p>Implemented by the broker over its metadata image; thread-safe.
 */
public interface TopicIds {

    /** Knows no topic: for brokers that advertise OffsetCommit and OffsetFetch only up to version 9. */
    TopicIds NONE = new TopicIds() {
        @Override
        public Optional<String> nameOf(Uuid topicId) {
            return Optional.empty();
        }

        @Override
        public Optional<Uuid> idOf(String topicName) {
            return Optional.empty();
        }
    };

    /** The name of the topic with {@code topicId}, if it exists. */
    Optional<String> nameOf(Uuid topicId);

    /** The id of the topic named {@code topicName}, if it exists. */
    Optional<Uuid> idOf(String topicName);
}
