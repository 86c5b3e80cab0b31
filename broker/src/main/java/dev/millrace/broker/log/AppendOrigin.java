package dev.millrace.broker.log;

/**
 * Who writes a leader append. Clients' batches follow the idempotence rules and may not contain
 * control batches; the broker's coordinators write transaction markers and transactional offset
 * commits, which carry a producer id and epoch but whose sequences mean nothing, and are only
 * checked for a fenced (older) epoch.
 */
public enum AppendOrigin {
    CLIENT,
    COORDINATOR
}
