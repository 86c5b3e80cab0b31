package dev.millrace.broker.controller;

import java.util.List;
import java.util.function.LongConsumer;

/**
 * What the active controller computed for one request: the records to commit and the response to
 * give once they are applied. Computing a result never changes the metadata; the records do, when
 * they are replayed. An empty record list means there is nothing to commit (validate-only, or every
 * entity failed validation) and the response can be given at once.
 *
 * @param records   to commit as one quorum log entry, in order
 * @param response  per entity
 * @param onApplied run on the event thread with the entry's quorum index once the records are
 *                  applied, before the response is given (the controller's in-memory bookkeeping);
 *                  null for none
 */
record ControllerResult<T>(List<MetadataRecord> records, T response, LongConsumer onApplied) {

    ControllerResult {
        records = List.copyOf(records);
    }

    ControllerResult(List<MetadataRecord> records, T response) {
        this(records, response, null);
    }
}
