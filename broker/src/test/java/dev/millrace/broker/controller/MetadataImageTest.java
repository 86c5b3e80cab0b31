package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Looking topics up by id, image after image. */
@Timeout(10)
class MetadataImageTest {

    @Test
    void shouldFindTopicsByIdInEachImage() {
        Uuid ordersId = Uuid.randomUuid();
        Uuid paymentsId = Uuid.randomUuid();
        Map<String, MetadataImage.TopicImage> topics = new HashMap<>();
        topics.put("orders", topic("orders", ordersId));
        MetadataImage first = new MetadataImage(1, Map.copyOf(topics));
        topics.put("payments", topic("payments", paymentsId));
        MetadataImage second = new MetadataImage(2, Map.copyOf(topics));

        assertThat(first.topic(ordersId)).map(MetadataImage.TopicImage::name).contains("orders");
        assertThat(first.topic(paymentsId)).isEmpty(); // not in that image
        assertThat(second.topic(paymentsId)).map(MetadataImage.TopicImage::name).contains("payments");
        assertThat(first.topic(paymentsId)).isEmpty(); // asked again after the newer image: still its own topics
        assertThat(second.topic(Uuid.randomUuid())).isEmpty();
    }

    private static MetadataImage.TopicImage topic(String name, Uuid id) {
        return new MetadataImage.TopicImage(name, id, Map.of(0, new MetadataImage.PartitionImage(0, List.of(1),
                List.of(1), 1, 0, 0)), Map.of());
    }
}
