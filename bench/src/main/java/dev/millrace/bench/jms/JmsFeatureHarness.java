package dev.millrace.bench.jms;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import org.HdrHistogram.Histogram;

import jakarta.jms.BytesMessage;
import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;

/**
 * The JMS load harness of issue 7 (transactions, selectors, delivery delay) for any provider: like
 * {@link JmsHarness} it sees only the {@code jakarta.jms} API and the {@link ConnectionFactory} it is given. Every
 * message is a PERSISTENT {@link BytesMessage} of {@link Settings#messageBytes} random bytes on a queue of its own per
 * measurement (named from {@link Settings#queuePrefix}).
 *
 * <ul>
 *   <li>transacted send: for each N of {@link Settings#batchSizes}, one producer in a SESSION_TRANSACTED session sends
 *       N messages and commits, in a loop for {@link Settings#transactedSeconds} after one unmeasured second;
 *       messages/s counts committed messages only. The queue is then drained (untimed) to check that every committed
 *       message is there;</li>
 *   <li>selector (after unmeasured passes of the same shape on queues of their own, see {@link #selectors}): in each
 *       of {@link Settings#selectorRounds} rounds, two queues filled with the same {@link Settings#selectorMessages}
 *       messages, every {@link Settings#matchEvery}-th with the string property {@code kind = 'match'}, the others
 *       {@code kind = 'other'}: an unfiltered consumer reads all of one queue (timed from its creation), then a
 *       consumer with the selector {@link #SELECTOR} reads the matching ones from the other, timed from its creation
 *       to the last match, and stops early when nothing arrives within {@link Settings#stallMs} ("stalled"). Two
 *       ratios per round: matches/s over unfiltered msgs/s from each consumer's creation, and the same from each
 *       one's first message to its last ({@link Selective#steadyPerSecond}), which leaves out creating the consumer,
 *       joining and the first fetch, as Kafka's {@code ConsumerPerformance} reports fetch throughput apart from the
 *       group join. The target of issue 7 (at least 0.50) is read on the second, the consumption throughput; with
 *       5,000 matches a selective run lasts 80-150 ms here, of which Millrace's consumer setup took 15-50 ms and
 *       Artemis's 2-10 ms, so the first mostly compares consumer creation. The round whose first ratio is the
 *       median is reported, and every round's two ratios are logged and listed: on this shared 2-core machine one
 *       pair's ratio ranged 0.28-0.58 between back-to-back runs of the same code, and the two runs of a round are
 *       the closest in time, so they see the most similar machine. Then
 *       once on a further queue with a second consumer (own connection, listener) taking the complement
 *       ({@link #COMPLEMENT}) at the same time, as an application that drains the other messages would;</li>
 *   <li>delivery delay (after an unmeasured pass of the same shape on a queue of its own, see {@link #delays}): a
 *       listener consumer on the queue, then one producer sends {@link Settings#delayedMessages}
 *       asynchronously (at most {@link Settings#asyncWindow} unconfirmed), each with {@code setDeliveryDelay} drawn
 *       uniformly from [{@link Settings#minDelayMs}, {@link Settings#maxDelayMs}] (seeded). Lateness = the listener's
 *       {@code System.currentTimeMillis()} at receipt minus the message's {@code JMSDeliveryTime} (same host, same
 *       clock), in an HdrHistogram; a negative lateness counts as early. As a check on {@code JMSDeliveryTime}
 *       itself, each message also carries the due time the harness intended (its clock before {@code send} plus the
 *       delay), and a {@code JMSDeliveryTime} earlier than that is counted.</li>
 * </ul>
 *
 * <p>Not thread-safe: one run at a time.
 */
public final class JmsFeatureHarness {

    static final String KIND = "kind";
    static final String SELECTOR = "kind = 'match'";
    static final String COMPLEMENT = "kind <> 'match'";
    private static final String INTENDED_DUE = "intendedDueMs";
    /** Warm-up rounds; see {@link #warmup}. */
    static final int WARMUP_ROUNDS = 3;

    /** What to run. */
    public record Settings(String queuePrefix, int messageBytes, long warmupMessages, List<Integer> batchSizes,
                           int transactedSeconds, int selectorMessages, int matchEvery, long stallMs,
                           int delayedMessages, int minDelayMs, int maxDelayMs, int asyncWindow, long timeoutMs,
                           int selectorRounds, int selectorPractice) {
    }

    /**
     * One transacted run: committed messages/s with a commit every {@code batch} messages; {@code measured} committed
     * in the timed part, {@code verified} found on the queue afterwards (of the timed part's and the warm-up's).
     */
    public record Transacted(int batch, double perSecond, long measured, long verified) {
    }

    /**
     * One selective consumption: {@code delivered} of {@code expected} matches, timed from consumer creation to the
     * last match; {@code scanned} the queue's records the broker had to pass over for them (all of the queue when
     * every match arrived); {@code complementDelivered} what the complement consumer had taken by then (0 without
     * one); {@code firstSeconds} from consumer creation to the first message (NaN when not measured).
     */
    public record Selective(long expected, long delivered, double seconds, boolean stalled, long scanned,
                            long complementDelivered, double firstSeconds) {

        public Selective(long expected, long delivered, double seconds, boolean stalled, long scanned,
                         long complementDelivered) {
            this(expected, delivered, seconds, stalled, scanned, complementDelivered, Double.NaN);
        }

        double deliveredPerSecond() {
            return delivered / seconds;
        }

        /**
         * Messages/s from the first message to the last, without the consumer's creation and the time to its first
         * message: {@code (delivered - 1) / (seconds - firstSeconds)}; NaN with fewer than two messages or no first.
         */
        double steadyPerSecond() {
            double span = seconds - firstSeconds;
            return delivered < 2 || Double.isNaN(firstSeconds) || span <= 0 ? Double.NaN : (delivered - 1) / span;
        }

        double scannedPerSecond() {
            return scanned / seconds;
        }
    }

    /**
     * Selector consumption: the unfiltered consumer's messages/s and the selective run alone of the round whose ratio
     * of the two is the median of {@code aloneRatios} (every round's, in order), and the run with a complement
     * consumer.
     */
    public record Selectors(double unfilteredPerSecond, Selective alone, Selective withComplement,
                            List<Double> aloneRatios, List<Double> steadyRatios) {

        /** One round only. */
        public Selectors(double unfilteredPerSecond, Selective alone, Selective withComplement) {
            this(unfilteredPerSecond, alone, withComplement,
                    List.of(alone.deliveredPerSecond() / unfilteredPerSecond), List.of());
        }

        /** The median of {@link #steadyRatios} (the lower middle one of an even count); NaN without any. */
        public double medianSteadyRatio() {
            List<Double> sorted = steadyRatios.stream().sorted().toList();
            return sorted.isEmpty() ? Double.NaN : sorted.get((sorted.size() - 1) / 2);
        }
    }

    /** Delivery-delay lateness in ms (receipt minus JMSDeliveryTime). */
    public record Delays(long sent, long received, long early, long minLatenessMs, long p50Ms, long p99Ms,
                         long p999Ms, long maxMs, long deliveryTimeBeforeIntended, double sendSeconds) {
    }

    private final ConnectionFactory factory;
    private final Settings settings;
    private final byte[] payload;

    public JmsFeatureHarness(ConnectionFactory factory, Settings settings) {
        this.factory = factory;
        this.settings = settings;
        this.payload = new byte[settings.messageBytes()];
        new Random(42).nextBytes(payload);
    }

    /**
     * Unmeasured: async sends and receives, to warm both JVMs, through the paths the scenarios measure, in
     * {@link #WARMUP_ROUNDS} rounds on queues of their own: 1 in {@link Settings#matchEvery} messages is taken by a
     * consumer with the selector first (each broker's selective delivery), then a consumer without one drains the
     * rest. Several rounds because a selective run is short (20,000 matches take well under a second) and one round's
     * few thousand matches left the JIT compiling the selective path during the measured run (a broker's compiler
     * threads used 0.6-1 core of it).
     */
    public void warmup(Consumer<String> log) throws JMSException, InterruptedException {
        long count = settings.warmupMessages();
        long matches = (count + settings.matchEvery() - 1) / settings.matchEvery();
        log.accept("warmup: " + WARMUP_ROUNDS + " rounds of " + count + " async sends; " + matches
                + " received with the selector, then the rest");
        for (int round = 0; round < WARMUP_ROUNDS; round++) {
            String queue = settings.queuePrefix() + "-warmup-" + round;
            fill(queue, count, settings.matchEvery());
            Selective selected = receive(queue, SELECTOR, matches, settings.timeoutMs());
            Selective drained = receive(queue, null, count - matches, settings.timeoutMs());
            if (selected.stalled() || drained.stalled()) {
                throw new IllegalStateException("warmup: received " + selected.delivered() + " of " + matches
                        + " with the selector, " + drained.delivered() + " of " + (count - matches) + " without");
            }
        }
    }

    public Transacted transacted(int batch, Consumer<String> log) throws JMSException {
        String queue = settings.queuePrefix() + "-txn-" + batch;
        long committed;
        long warm = 0;
        double perSecond;
        try (Connection connection = factory.createConnection()) {
            Session session = connection.createSession(true, Session.SESSION_TRANSACTED);
            MessageProducer producer = session.createProducer(session.createQueue(queue));
            producer.setDeliveryMode(DeliveryMode.PERSISTENT);
            long warmEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (System.nanoTime() < warmEnd) {
                for (int i = 0; i < batch; i++) {
                    producer.send(message(session));
                }
                session.commit();
                warm += batch;
            }
            long start = System.nanoTime();
            long end = start + TimeUnit.SECONDS.toNanos(settings.transactedSeconds());
            committed = 0;
            long now;
            do {
                for (int i = 0; i < batch; i++) {
                    producer.send(message(session));
                }
                session.commit();
                committed += batch;
                now = System.nanoTime();
            } while (now < end);
            perSecond = committed * 1e9 / (now - start);
        }
        long total = committed + warm;
        log.accept(String.format("  commit every %d: %.0f msgs/s (%d committed); draining all %d to check", batch,
                perSecond, committed, total));
        Selective drained = receive(queue, null, total, settings.stallMs());
        if (drained.stalled()) {
            throw new IllegalStateException("commit every " + batch + ": " + total
                    + " messages committed, only " + drained.delivered() + " on the queue");
        }
        return new Transacted(batch, perSecond, committed, drained.delivered());
    }

    /**
     * Selector consumption (see the class comment), after {@link Settings#selectorPractice} unmeasured passes over
     * queues filled like the others: their matches with the selector, then the rest without, so that both brokers (and
     * this JVM) run their selective and unfiltered paths compiled, as the other scenarios do theirs.
     */
    public Selectors selectors(Consumer<String> log) throws Exception {
        int m = settings.selectorMessages();
        int rounds = Math.max(1, settings.selectorRounds());
        long matches = (m + settings.matchEvery() - 1) / settings.matchEvery();
        String paired = settings.queuePrefix() + "-sel-paired";
        int practices = Math.max(1, settings.selectorPractice());
        log.accept("queues of " + m + " messages, 1 in " + settings.matchEvery() + " with " + SELECTOR + ": "
                + practices + " unmeasured passes, then " + rounds + " rounds of an unfiltered and a selective "
                + "consumer, each queue filled right before it is read and left empty");
        // Each queue is filled right before it is read and drained after (the rest of a selective run's queue,
        // unmeasured), so that no more than two queues' messages are on a broker at a time: with all of them filled
        // first (eight queues of 50,000 1 KiB messages), Artemis's selective consumer stalled after 1,277 of 5,000
        // matches in two of three rounds, where with four queues it had not.
        // Unmeasured, right before the measurements: on each practice queue the matches with the
        // selector, then the rest without. The general warm-up's selective runs are short (a few fetches each), and
        // compiler logs of Millrace runs showed both JVMs still compiling the paths a selective run takes at the top
        // tier during the measured runs after one such pass: the broker its selective scan (SelectiveLookahead.scan,
        // 190-370 ms of C2 time, BatchCut), the bench JVM RecordMessageMapper.toMessage (190 ms; it ran as profiled
        // C1 code until then, the C2 queue of a 2-core machine's single C2 thread being that long) and kafka-clients'
        // share consumer; the compiler threads had half or more of both JVMs' CPU samples then, and the first
        // measured round was the slowest. By the third pass the measured windows held little compilation.
        // A selective consumer that stalls here (Artemis does on deep queues) is not a failure of the pass: the
        // consumer without a selector takes whatever is left.
        for (int p = 0; p < practices; p++) {
            String practice = settings.queuePrefix() + "-sel-practice-" + p;
            fill(practice, m, settings.matchEvery());
            Selective practiceSelected = receive(practice, SELECTOR, matches, settings.stallMs());
            long rest = m - practiceSelected.delivered();
            Selective practiceRest = receive(practice, null, rest, settings.timeoutMs());
            if (practiceRest.stalled()) {
                throw new IllegalStateException("unmeasured selector pass: received " + practiceSelected.delivered()
                        + " of " + matches + " with the selector, then " + practiceRest.delivered() + " of " + rest
                        + " without");
            }
            if (practiceSelected.stalled()) {
                log.accept("  (unmeasured pass " + (p + 1) + ": the selective consumer stalled after "
                        + practiceSelected.delivered() + " of " + matches + " matches)");
            }
        }
        List<Selective> unfiltered = new ArrayList<>();
        List<Selective> selective = new ArrayList<>();
        List<Double> ratios = new ArrayList<>();
        List<Double> steadyRatios = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            String aloneQueue = settings.queuePrefix() + "-sel-alone-" + r;
            fill(settings.queuePrefix() + "-sel-all-" + r, m, settings.matchEvery());
            fill(aloneQueue, m, settings.matchEvery());
            Selective all = receive(settings.queuePrefix() + "-sel-all-" + r, null, m, settings.timeoutMs());
            if (all.stalled()) {
                throw new IllegalStateException("unfiltered consumer received " + all.delivered() + " of " + m);
            }
            Selective alone = receive(aloneQueue, SELECTOR, matches, settings.stallMs());
            Selective drained = receive(aloneQueue, null, m - alone.delivered(), settings.stallMs());
            if (drained.stalled()) {
                log.accept("  (round " + (r + 1) + ": drained " + drained.delivered() + " of the "
                        + (m - alone.delivered()) + " messages left)");
            }
            alone = new Selective(matches, alone.delivered(), alone.seconds(), alone.stalled(),
                    alone.stalled() ? 0 : m, 0, alone.firstSeconds());
            double ratio = alone.stalled() ? 0 : alone.deliveredPerSecond() / all.deliveredPerSecond();
            double steady = alone.stalled() ? 0 : alone.steadyPerSecond() / all.steadyPerSecond();
            unfiltered.add(all);
            selective.add(alone);
            ratios.add(ratio);
            steadyRatios.add(steady);
            log.accept(String.format(Locale.ROOT, "  round %d: unfiltered %.0f msgs/s (first after %.0f ms, %.0f msgs/s "
                    + "from it); %s, %.0f matches/s from the first; ratio %.2f, first to last %.2f", r + 1,
                    all.deliveredPerSecond(), all.firstSeconds() * 1e3, all.steadyPerSecond(),
                    describe("selector alone", alone).trim(), alone.steadyPerSecond(), ratio, steady));
        }
        List<Integer> order = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            order.add(r);
        }
        order.sort(Comparator.comparingDouble(ratios::get));
        int median = order.get((rounds - 1) / 2);
        log.accept(String.format(Locale.ROOT, "  median round: %d (ratios [%s]; first to last [%s])", median + 1,
                twoDecimals(ratios, ", "), twoDecimals(steadyRatios, ", ")));
        fill(paired, m, settings.matchEvery());
        Selective withComplement = withComplement(paired, m, matches);
        log.accept(describe("selector + complement consumer", withComplement));
        return new Selectors(unfiltered.get(median).deliveredPerSecond(), selective.get(median), withComplement,
                List.copyOf(ratios), List.copyOf(steadyRatios));
    }

    /** The ratios with two decimals, joined by {@code separator}. */
    static String twoDecimals(List<Double> ratios, String separator) {
        return String.join(separator, ratios.stream().map(x -> String.format(Locale.ROOT, "%.2f", x)).toList());
    }

    private static String describe(String what, Selective s) {
        return String.format(Locale.ROOT, "  %s: %d of %d matches in %.3f s (first after %.0f ms), %.0f matches/s%s",
                what, s.delivered(), s.expected(), s.seconds(), s.firstSeconds() * 1e3, s.deliveredPerSecond(),
                s.stalled() ? ", STALLED (nothing more within the stall timeout)"
                        : String.format(", %.0f records scanned/s", s.scannedPerSecond()))
                + (s.complementDelivered() > 0 ? ", complement consumer had " + s.complementDelivered() : "");
    }

    private Selective withComplement(String queue, int m, long matches) throws Exception {
        AtomicLong others = new AtomicLong();
        CountDownLatch othersDone = new CountDownLatch(1);
        long expectedOthers = m - matches;
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (Connection complementConnection = factory.createConnection()) {
            Session complementSession = complementConnection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer complement = complementSession.createConsumer(complementSession.createQueue(queue),
                    COMPLEMENT);
            complement.setMessageListener(message -> {
                try {
                    if ("match".equals(message.getStringProperty(KIND))) {
                        failure.compareAndSet(null, new IllegalStateException("complement got a match"));
                    }
                } catch (JMSException e) {
                    failure.compareAndSet(null, e);
                }
                if (others.incrementAndGet() == expectedOthers) {
                    othersDone.countDown();
                }
            });
            complementConnection.start();
            Selective selective = receive(queue, SELECTOR, matches, settings.stallMs());
            long complementAtEnd = others.get();
            if (!othersDone.await(settings.stallMs(), TimeUnit.MILLISECONDS)) {
                System.out.println("  (complement consumer: " + others.get() + " of " + expectedOthers + ")");
            }
            if (failure.get() != null) {
                throw failure.get();
            }
            return new Selective(matches, selective.delivered(), selective.seconds(), selective.stalled(),
                    selective.stalled() ? 0 : selective.delivered() + complementAtEnd, complementAtEnd,
                    selective.firstSeconds());
        }
    }

    /**
     * Delivery-delay lateness: the same pass twice on queues of their own, the first unmeasured. The general warm-up
     * sends no delayed message, so without it the measured burst ran while both JVMs compiled their delay paths (a
     * profile of one Millrace run: C2 compiler threads used 2.9 of the bench JVM's 4.7 CPU-seconds and 2.7 of the
     * broker's 4.4, the delay service itself 0.17); the lateness to report is that of running paths, as in the other
     * scenarios.
     */
    public Delays delays(Consumer<String> log) throws JMSException, InterruptedException {
        log.accept("delivery delay, unmeasured warm-up pass:");
        delayPass(settings.queuePrefix() + "-delay-warmup", log);
        log.accept("delivery delay, measured pass:");
        return delayPass(settings.queuePrefix() + "-delay", log);
    }

    private Delays delayPass(String queue, Consumer<String> log) throws JMSException, InterruptedException {
        int count = settings.delayedMessages();
        Histogram lateness = new Histogram(TimeUnit.HOURS.toMillis(1), 3);
        AtomicLong received = new AtomicLong();
        AtomicLong early = new AtomicLong();
        AtomicLong minLateness = new AtomicLong(Long.MAX_VALUE);
        AtomicLong beforeIntended = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Exception> failure = new AtomicReference<>();
        log.accept("delivery delay: " + count + " messages, delays " + settings.minDelayMs() + "-"
                + settings.maxDelayMs() + " ms");
        try (Connection consumerConnection = factory.createConnection();
             Connection producerConnection = factory.createConnection()) {
            Session consumerSession = consumerConnection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = consumerSession.createConsumer(consumerSession.createQueue(queue));
            consumer.setMessageListener(message -> {
                long now = System.currentTimeMillis();
                try {
                    long deliveryTime = message.getJMSDeliveryTime();
                    if (deliveryTime < message.getLongProperty(INTENDED_DUE)) {
                        beforeIntended.incrementAndGet();
                    }
                    long late = now - deliveryTime;
                    minLateness.accumulateAndGet(late, Math::min);
                    if (late < 0) {
                        early.incrementAndGet();
                    } else {
                        synchronized (lateness) {
                            lateness.recordValue(Math.min(late, lateness.getHighestTrackableValue()));
                        }
                    }
                } catch (JMSException e) {
                    failure.compareAndSet(null, e);
                }
                if (received.incrementAndGet() == count) {
                    done.countDown();
                }
            });
            consumerConnection.start();
            Session session = producerConnection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = session.createProducer(session.createQueue(queue));
            producer.setDeliveryMode(DeliveryMode.PERSISTENT);
            Semaphore window = new Semaphore(settings.asyncWindow());
            CompletionListener listener = new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                    window.release();
                }

                @Override
                public void onException(Message message, Exception exception) {
                    failure.compareAndSet(null, exception);
                    window.release();
                }
            };
            Random random = new Random(7);
            int span = settings.maxDelayMs() - settings.minDelayMs() + 1;
            long start = System.nanoTime();
            for (int i = 0; i < count && failure.get() == null; i++) {
                if (!window.tryAcquire(settings.timeoutMs(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("no send confirmation within " + settings.timeoutMs() + " ms");
                }
                long delay = settings.minDelayMs() + random.nextInt(span);
                producer.setDeliveryDelay(delay);
                BytesMessage message = message(session);
                message.setLongProperty(INTENDED_DUE, System.currentTimeMillis() + delay);
                producer.send(message, listener);
            }
            if (!window.tryAcquire(settings.asyncWindow(), settings.timeoutMs(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("sends not all confirmed within " + settings.timeoutMs() + " ms");
            }
            double sendSeconds = (System.nanoTime() - start) / 1e9;
            log.accept(String.format("  sent in %.2f s; waiting for the last", sendSeconds));
            if (!done.await(settings.maxDelayMs() + settings.timeoutMs(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("received " + received.get() + " of " + count
                        + " delayed messages");
            }
            if (failure.get() != null) {
                throw new IllegalStateException("delivery-delay run failed", failure.get());
            }
            Delays result;
            synchronized (lateness) {
                result = new Delays(count, received.get(), early.get(), minLateness.get(),
                        lateness.getValueAtPercentile(50), lateness.getValueAtPercentile(99),
                        lateness.getValueAtPercentile(99.9), lateness.getMaxValue(), beforeIntended.get(),
                        sendSeconds);
            }
            log.accept(String.format("  lateness p50 %d ms, p99 %d ms, p99.9 %d ms, max %d ms, min %d ms; "
                            + "early %d; JMSDeliveryTime before the intended due time %d", result.p50Ms(),
                    result.p99Ms(), result.p999Ms(), result.maxMs(), result.minLatenessMs(), result.early(),
                    result.deliveryTimeBeforeIntended()));
            return result;
        }
    }

    private BytesMessage message(Session session) throws JMSException {
        BytesMessage message = session.createBytesMessage();
        message.writeBytes(payload);
        return message;
    }

    /**
     * Sends {@code count} messages asynchronously (at most {@link Settings#asyncWindow} unconfirmed); with
     * {@code matchEvery} &gt; 0, every matchEvery-th (from the first) gets {@code kind = 'match'}, the others
     * {@code kind = 'other'}.
     */
    private void fill(String queueName, long count, int matchEvery) throws JMSException, InterruptedException {
        try (Connection connection = factory.createConnection()) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = session.createProducer(session.createQueue(queueName));
            producer.setDeliveryMode(DeliveryMode.PERSISTENT);
            Semaphore window = new Semaphore(settings.asyncWindow());
            AtomicReference<Exception> failure = new AtomicReference<>();
            CompletionListener listener = new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                    window.release();
                }

                @Override
                public void onException(Message message, Exception exception) {
                    failure.compareAndSet(null, exception);
                    window.release();
                }
            };
            for (long i = 0; i < count && failure.get() == null; i++) {
                if (!window.tryAcquire(settings.timeoutMs(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("no send confirmation within " + settings.timeoutMs() + " ms");
                }
                BytesMessage message = message(session);
                if (matchEvery > 0) {
                    message.setStringProperty(KIND, i % matchEvery == 0 ? "match" : "other");
                }
                producer.send(message, listener);
            }
            if (!window.tryAcquire(settings.asyncWindow(), settings.timeoutMs(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("sends to " + queueName + " not all confirmed within "
                        + settings.timeoutMs() + " ms");
            }
            if (failure.get() != null) {
                throw new IllegalStateException("send to " + queueName + " failed", failure.get());
            }
        }
    }

    /**
     * Receives up to {@code count} messages with one consumer (with the selector, if not null), timed from its
     * creation to the last message; stops early ("stalled") when nothing arrives within {@code stallMs}. With a
     * selector, a message that does not match it fails the run.
     */
    private Selective receive(String queueName, String selector, long count, long stallMs) throws JMSException {
        try (Connection connection = factory.createConnection()) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            long start = System.nanoTime();
            MessageConsumer consumer = session.createConsumer(session.createQueue(queueName), selector);
            connection.start();
            long last = start;
            long first = 0;
            long delivered = 0;
            while (delivered < count) {
                Message message = consumer.receive(stallMs);
                if (message == null) {
                    break;
                }
                last = System.nanoTime();
                if (delivered == 0) {
                    first = last;
                }
                delivered++;
                if (selector != null && !"match".equals(message.getStringProperty(KIND))) {
                    throw new IllegalStateException("selector " + selector + " delivered a message with kind "
                            + message.getStringProperty(KIND));
                }
            }
            return new Selective(count, delivered, Math.max(1, last - start) / 1e9, delivered < count, 0, 0,
                    delivered == 0 ? Double.NaN : (first - start) / 1e9);
        }
    }
}
