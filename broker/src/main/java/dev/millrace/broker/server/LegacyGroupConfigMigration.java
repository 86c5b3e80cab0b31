package dev.millrace.broker.server;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.requests.ApiError;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.cluster.ControllerClient;
import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.Controller.GroupConfigChange;
import dev.millrace.broker.share.ShareStateCoordinator;
import dev.millrace.broker.share.ShareStateSerde;

/**
 * Moves share-group settings that earlier versions kept in the share-state topic (key version 1 of
 * {@link ShareStateSerde}, read by the share-state coordinator when it loads a partition) into the metadata log, where
 * group configs live now. For each group with such a record in a state partition this broker serves at start: when
 * the metadata holds no setting of the group, the record's settings are committed through the active controller (the
 * same check as an IncrementalAlterConfigs); then the record gets a tombstone, so that it is not moved again after a
 * later change. Settings already in the metadata are newer and win; the old record is only dropped.
 *
 * <p>A record that cannot be moved (no active controller within {@code timeoutMs}, settings the controller refuses)
 * is kept and logged, and tried again at the next start. Records in state partitions other brokers serve are moved by
 * those brokers at their start. Runs once, on the starting thread.
 */
final class LegacyGroupConfigMigration {

    private static final Logger log = LoggerFactory.getLogger(LegacyGroupConfigMigration.class);

    private LegacyGroupConfigMigration() {
    }

    /** @return how many groups' old records were dropped (moved or superseded) */
    static int run(ShareStateCoordinator states, Controller controller, ControllerClient controllerClient,
                   long timeoutMs) {
        int dropped = 0;
        for (Map.Entry<String, Map<String, String>> legacy : states.groupConfigs().entrySet()) {
            String groupId = legacy.getKey();
            try {
                if (controller.image().groupConfigs(groupId).isEmpty() && !legacy.getValue().isEmpty()) {
                    ApiError result = controllerClient.alterGroupConfigs(Map.of(groupId,
                            new GroupConfigChange(legacy.getValue(), List.of())), false)
                            .get(timeoutMs, TimeUnit.MILLISECONDS).get(groupId);
                    if (result == null || result.isFailure()) {
                        log.warn("Share group {}: its settings {} from the share-state topic were not moved to the "
                                + "metadata log: {}; kept there, tried again at the next start", groupId,
                                legacy.getValue(), result == null ? "no answer" : result.messageWithFallback());
                        continue;
                    }
                    log.info("Share group {}: moved its settings {} from the share-state topic to the metadata log",
                            groupId, legacy.getValue());
                }
                states.saveGroupConfig(groupId, Map.of()).get(timeoutMs, TimeUnit.MILLISECONDS);
                dropped++;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return dropped;
            } catch (Exception e) {
                log.warn("Share group {}: could not move its settings from the share-state topic to the metadata "
                        + "log: {}; tried again at the next start", groupId, e.toString());
            }
        }
        return dropped;
    }
}
