package dev.millrace.ra.it.recovery;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waiting for a server process's application to answer. */
final class HttpPolls {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private HttpPolls() {
    }

    /**
     * GETs {@code url} until it answers 200 and returns the body; fails with {@code log}'s text if {@code alive}
     * turns false or {@code timeout} passes first. Polls every 200 ms.
     */
    static String awaitOk(URI url, Duration timeout, BooleanSupplier alive, Supplier<String> log)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            if (!alive.getAsBoolean()) {
                throw new IllegalStateException("the server died while " + url + " was awaited:\n" + log.get());
            }
            try {
                HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return r.body();
                }
                last = "HTTP " + r.statusCode();
            } catch (IOException notYet) {
                last = notYet.toString();
            }
            Thread.sleep(200); // polling a server process: nothing to be told by
        }
        throw new IllegalStateException(url + " not answering after " + timeout + " (" + last + "):\n" + log.get());
    }
}
