package dev.millrace.broker.delay;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.controller.BrokerState;
import dev.millrace.broker.controller.MetadataImage;

/**
 * Which broker deaths make {@link DeadBrokerRounds} initialise the dead broker's delivery id: a broker going from
 * alive (unfenced or in controlled shutdown) to fenced, seen by an unfenced broker other than itself; and that a
 * failed initialisation is retried while the broker stays fenced. The cases that must not fence are followed by one
 * that must: the initialisations run one at a time in order, so the first one recorded shows nothing came before.
 */
@Timeout(30)
class DeadBrokerRoundsTest {

    private static final int SELF = 1;

    private final BlockingQueue<String> fenced = new LinkedBlockingQueue<>();
    private final AtomicReference<MetadataImage> current = new AtomicReference<>();

    @Test
    void aBrokerThatDiesHasItsDeliveryIdInitialisedAndNoOtherDoes() throws Exception {
        try (DeadBrokerRounds rounds = new DeadBrokerRounds(SELF, id -> "rounds-" + id, fenced::add, current::get)) {
            MetadataImage alive = image(Map.of(1, BrokerState.UNFENCED, 2, BrokerState.UNFENCED,
                    3, BrokerState.UNFENCED));
            // not deaths: a new registration, a broker entering controlled shutdown, this broker itself
            update(rounds, image(Map.of(1, BrokerState.UNFENCED, 2, BrokerState.UNFENCED)), alive);
            update(rounds, alive, image(Map.of(1, BrokerState.UNFENCED, 2, BrokerState.UNFENCED,
                    3, BrokerState.CONTROLLED_SHUTDOWN)));
            update(rounds, alive, image(Map.of(1, BrokerState.FENCED, 2, BrokerState.UNFENCED,
                    3, BrokerState.UNFENCED)));
            // a death seen while this broker is fenced itself: the others see to it
            update(rounds, alive, image(Map.of(1, BrokerState.FENCED, 2, BrokerState.FENCED,
                    3, BrokerState.UNFENCED)));
            // deaths: session expired after controlled shutdown, SIGKILL of an unfenced broker
            update(rounds, image(Map.of(1, BrokerState.UNFENCED, 2, BrokerState.UNFENCED,
                    3, BrokerState.CONTROLLED_SHUTDOWN)), image(Map.of(1, BrokerState.UNFENCED,
                    2, BrokerState.UNFENCED, 3, BrokerState.FENCED)));
            assertThat(fenced.poll(10, TimeUnit.SECONDS)).isEqualTo("rounds-3");
            update(rounds, alive, image(Map.of(1, BrokerState.UNFENCED, 2, BrokerState.FENCED,
                    3, BrokerState.UNFENCED)));
            assertThat(fenced.poll(10, TimeUnit.SECONDS)).isEqualTo("rounds-2");
            assertThat(fenced).isEmpty();
        }
    }

    @Test
    void aFailedInitialisationIsRetriedWhileTheBrokerStaysFenced() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        DeadBrokerRounds.Fencer failingOnce = id -> {
            if (attempts.incrementAndGet() == 1) {
                throw new IllegalStateException("the coordinator of " + id + " is moving");
            }
            fenced.add(id);
        };
        try (DeadBrokerRounds rounds = new DeadBrokerRounds(SELF, id -> "rounds-" + id, failingOnce, current::get)) {
            update(rounds, image(Map.of(1, BrokerState.UNFENCED, 2, BrokerState.UNFENCED)),
                    image(Map.of(1, BrokerState.UNFENCED, 2, BrokerState.FENCED)));
            assertThat(fenced.poll(10, TimeUnit.SECONDS)).isEqualTo("rounds-2");
            assertThat(attempts).hasValue(2);
        }
    }

    private void update(DeadBrokerRounds rounds, MetadataImage previous, MetadataImage next) {
        current.set(next);
        rounds.onMetadataUpdate(previous, next);
    }

    private static MetadataImage image(Map<Integer, BrokerState> states) {
        Map<Integer, MetadataImage.BrokerImage> brokers = new TreeMap<>();
        states.forEach((id, state) -> brokers.put(id, new MetadataImage.BrokerImage(id, Uuid.ZERO_UUID, 10,
                "127.0.0.1", 9000 + id, null, state)));
        return new MetadataImage(1, Map.of(), 0, "cluster", brokers);
    }
}
