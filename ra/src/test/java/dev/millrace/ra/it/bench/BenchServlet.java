package dev.millrace.ra.it.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

import jakarta.annotation.Resource;
import jakarta.enterprise.concurrent.ManagedThreadFactory;

import jakarta.ejb.EJB;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * The benchmark's way into the server (GET, {@code side} = {@code millrace} or {@code artemis}):
 * <pre>
 *   /bench/reset?side=&amp;expected=N             start a round of the side's recorder expecting N messages
 *   /bench/fill?side=&amp;count=N&amp;batch=B          send N messages in transactions of B (BenchSender.fill)
 *   /bench/paced?side=&amp;count=N&amp;rate=R&amp;senders=S  send N messages at R per second from S threads
 *                                            (BenchSender.sendAtFixedRate); answers the rate reached
 *   /bench/await?side=&amp;timeoutMs=T           wait for the round's messages; answers BenchRecorder.await's line
 * </pre>
 * A failure answers 500 with the exception.
 */
@WebServlet("/bench/*")
public class BenchServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @EJB
    private BenchSender sender;

    @Resource
    private ManagedThreadFactory threads;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain");
        String side = request.getParameter("side");
        try {
            BenchRecorder recorder = BenchRecorder.of(side);
            String answer;
            switch (String.valueOf(request.getPathInfo())) {
                case "/reset" -> {
                    recorder.reset(intParam(request, "expected"));
                    answer = "reset";
                }
                case "/fill" -> {
                    int count = intParam(request, "count");
                    int batch = intParam(request, "batch");
                    for (int sent = 0; sent < count; sent += batch) {
                        sender.fill(side, Math.min(batch, count - sent));
                    }
                    answer = "sent " + count;
                }
                case "/paced" -> answer = paced(side, new BenchSender.FixedRate(intParam(request, "count"),
                        intParam(request, "rate"), intParam(request, "senders"), System.nanoTime() + 20_000_000));
                case "/await" -> answer = recorder.await(Long.parseLong(request.getParameter("timeoutMs")));
                default -> {
                    response.sendError(404, "unknown " + request.getPathInfo());
                    return;
                }
            }
            response.getWriter().print(answer);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            response.setStatus(500);
            response.getWriter().print(e);
        } catch (RuntimeException e) {
            response.setStatus(500);
            response.getWriter().print(e);
        }
    }

    /** Runs {@code schedule} on its threads; the rate reached, messages per second from its start to the last send. */
    private String paced(String side, BenchSender.FixedRate schedule) throws InterruptedException {
        List<FutureTask<Long>> tasks = new ArrayList<>();
        for (int i = 0; i < schedule.senders(); i++) {
            int index = i;
            FutureTask<Long> task = new FutureTask<>(() -> sender.sendAtFixedRate(side, schedule, index));
            threads.newThread(task).start();
            tasks.add(task);
        }
        long end = 0;
        for (FutureTask<Long> task : tasks) {
            try {
                end = Math.max(end, task.get());
            } catch (ExecutionException e) {
                throw new IllegalStateException("a sender failed: " + e.getCause(), e.getCause());
            }
        }
        return String.format("%.1f", (schedule.count() - 1) * 1e9 / (end - schedule.startNanos()));
    }

    private static int intParam(HttpServletRequest request, String name) {
        String value = request.getParameter(name);
        try {
            int parsed = Integer.parseInt(value);
            if (parsed <= 0) {
                throw new IllegalArgumentException(name + " must be positive, not " + value);
            }
            return parsed;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a positive integer, not " + value, e);
        }
    }
}
