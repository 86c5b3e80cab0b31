package dev.millrace.broker.controller;

import java.util.List;

/**
 * What the active controller computed for one request: the records to commit and the response to
 * give once they are applied. Computing a result never changes state; the records do, when they are
 * replayed. An empty record list means there is nothing to commit (validate-only, or every entity
 * failed validation) and the response can be given at once.
 *
 * @param records  to commit as one quorum log entry, in order
 * @param response per entity
 */
record ControllerResult<T>(List<MetadataRecord> records, T response) {

    ControllerResult {
        records = List.copyOf(records);
    }
}
