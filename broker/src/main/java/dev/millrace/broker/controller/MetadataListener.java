package dev.millrace.broker.controller;

/** Receives every change to the metadata image, on the controller's applying thread. */
@FunctionalInterface
public interface MetadataListener {
    void onMetadataUpdate(MetadataImage previous, MetadataImage current);
}
