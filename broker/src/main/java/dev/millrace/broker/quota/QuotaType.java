package dev.millrace.broker.quota;

/**
 * The kinds of client quota, with Kafka's key names: what is measured, and in what unit the quota is given.
 */
public enum QuotaType {
    /** Bytes of record batches produced per second. */
    PRODUCE("producer_byte_rate", 1.0),
    /** Bytes of record batches fetched (Fetch, ShareFetch) per second. */
    FETCH("consumer_byte_rate", 1.0),
    /**
     * Time on request threads, as a percentage of one thread: measured in milliseconds per second, so a quota of
     * {@code p} percent allows {@code 10 * p} ms per second.
     */
    REQUEST("request_percentage", 10.0);

    private final String key;
    private final double perSecondPerUnit;

    QuotaType(String key, double perSecondPerUnit) {
        this.key = key;
        this.perSecondPerUnit = perSecondPerUnit;
    }

    /** The quota key of Admin {@code alterClientQuotas}. */
    public String key() {
        return key;
    }

    /** The quota value {@code value} (as set through the Admin API) as a rate of what is recorded, per second. */
    double ratePerSecond(double value) {
        return value * perSecondPerUnit;
    }

    /** The type of quota key {@code key}, or null. */
    public static QuotaType forKey(String key) {
        for (QuotaType type : values()) {
            if (type.key.equals(key)) {
                return type;
            }
        }
        return null;
    }
}
