package dev.millrace.broker.share;

/** A {@link SharePartitionListener} that ignores every event, for tests that look only at a partition's state. */
final class QuietListener implements SharePartitionListener {

    static final QuietListener INSTANCE = new QuietListener();

    private QuietListener() {
    }

    @Override
    public void onRecordsAvailable(SharePartitionKey key) {
    }

    @Override
    public void onArchived(DeadLetter deadLetter) {
    }
}
