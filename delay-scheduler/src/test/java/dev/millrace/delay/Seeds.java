package dev.millrace.delay;

import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.LongStream;

/**
 * Seeds for the randomized tests: {@code -Ddelay.seed=N} runs only seed N (to replay a failure);
 * otherwise a fixed set, so runs are comparable, plus one fresh seed per run, which the test name
 * reports.
 */
final class Seeds {

    private Seeds() {
    }

    static LongStream of(int fixedCount) {
        String replay = System.getProperty("delay.seed");
        if (replay != null) {
            return LongStream.of(Long.parseLong(replay));
        }
        return LongStream.concat(LongStream.rangeClosed(1, fixedCount),
                LongStream.of(ThreadLocalRandom.current().nextLong()));
    }
}
