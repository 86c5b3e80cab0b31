package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnknownServerException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.controller.MetadataRecord.ProducerIdsRecord;

class ProducerIdControlManagerTest {

    private final ProducerIdControlManager manager = new ProducerIdControlManager();

    @Test
    @Timeout(10)
    void shouldStartTheBlockAtTheImagesNextIdAndRecordTheIdAfterIt() {
        MetadataImage image = new MetadataImage(5, Map.of(), 7000);

        ControllerResult<ProducerIdBlock> result = manager.handleAllocateProducerIds(image, 3);

        assertThat(result.response()).isEqualTo(new ProducerIdBlock(3, 7000, 1000));
        assertThat(result.response().lastProducerId()).isEqualTo(7999);
        assertThat(result.records()).containsExactly(new ProducerIdsRecord(3, 8000));
        assertThat(image.nextProducerId()).as("the image is not changed").isEqualTo(7000);
    }

    @Test
    @Timeout(10)
    void shouldStartAtZeroWhenNothingWasAllocated() {
        ControllerResult<ProducerIdBlock> result = manager.handleAllocateProducerIds(MetadataImage.EMPTY, 1);

        assertThat(result.response()).isEqualTo(new ProducerIdBlock(1, 0, 1000));
        assertThat(result.records()).containsExactly(new ProducerIdsRecord(1, 1000));
    }

    @Test
    @Timeout(10)
    void shouldRefuseWhenTheIdSpaceIsExhaustedOrTheBrokerIdIsNegative() {
        MetadataImage full = new MetadataImage(5, Map.of(), Long.MAX_VALUE - 999);

        assertThatThrownBy(() -> manager.handleAllocateProducerIds(full, 1))
                .isInstanceOf(UnknownServerException.class)
                .hasMessageContaining("every producer id is taken");
        assertThatThrownBy(() -> manager.handleAllocateProducerIds(MetadataImage.EMPTY, -2))
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("broker -2");
        assertThat(manager.handleAllocateProducerIds(new MetadataImage(5, Map.of(), Long.MAX_VALUE - 1000), 1)
                .response().lastProducerId()).isEqualTo(Long.MAX_VALUE - 1);
    }
}
