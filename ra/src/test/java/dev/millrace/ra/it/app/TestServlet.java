package dev.millrace.ra.it.app;

import java.io.IOException;

import jakarta.ejb.EJB;
import jakarta.jms.JMSException;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * The test's way into the server: {@code /test/send?queue=&body=&api=context|session&rollback=true|false} calls
 * {@link SenderBean}; {@code /test/poison-log} returns {@link PoisonMdb}'s deliveries, one a line; {@code /test/rows} the
 * bodies {@link DatabaseMdb} wrote, one a line.
 */
@WebServlet("/test/*")
public class TestServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @EJB
    private SenderBean sender;

    @EJB
    private OrdersTable table;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain");
        String path = request.getPathInfo();
        if ("/send".equals(path)) {
            String queue = request.getParameter("queue");
            String body = request.getParameter("body");
            boolean rollback = Boolean.parseBoolean(request.getParameter("rollback"));
            try {
                if ("session".equals(request.getParameter("api"))) {
                    sender.sendWithSession(queue, body, rollback);
                } else {
                    sender.sendWithContext(queue, body, rollback);
                }
                response.getWriter().print("sent");
            } catch (JMSException | RuntimeException e) {
                response.setStatus(500);
                response.getWriter().print(e);
            }
        } else if ("/rows".equals(path)) {
            response.getWriter().print(String.join("\n", table.rows()));
        } else if ("/poison-log".equals(path)) {
            response.getWriter().print(String.join("\n", PoisonMdb.DELIVERIES));
        } else {
            response.sendError(404, "unknown " + path);
        }
    }
}
