package dev.millrace.broker.controller;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.Uuid;

/**
 * Topics by id for the latest {@link MetadataImage} asked about: built once per image (images are immutable and
 * replaced whole on every change), where looking a topic id up by scanning every topic cost each ShareFetch and
 * Fetch by id a pass over the whole cluster's topics. Thread-safe: the index and its image are published together.
 */
final class TopicIdIndex {

    private record Built(MetadataImage image, Map<Uuid, MetadataImage.TopicImage> byId) {
    }

    private static volatile Built last;

    private TopicIdIndex() {
    }

    static Map<Uuid, MetadataImage.TopicImage> of(MetadataImage image) {
        Built built = last;
        if (built != null && built.image() == image) {
            return built.byId();
        }
        Map<Uuid, MetadataImage.TopicImage> byId = new HashMap<>();
        image.topics().values().forEach(t -> byId.put(t.topicId(), t));
        last = new Built(image, byId);
        return byId;
    }
}
