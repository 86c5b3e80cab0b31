package dev.millrace.samples.mdb;

import java.io.IOException;

import jakarta.ejb.EJB;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * The application's front door:
 * <ul>
 *   <li>{@code POST /orders?prefix=order-&count=20&quantity=2} places {@code count} orders
 *       {@code <prefix>1..<prefix><count>}, each in its own transaction ({@link OrderDesk}), and answers
 *       {@code placed <count>};</li>
 *   <li>{@code GET /orders} lists {@link OrderProcessor}'s deliveries ({@link DeliveryLog}), one a line.</li>
 * </ul>
 */
@WebServlet("/orders")
public class OrdersServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @EJB
    private OrderDesk desk;

    @EJB
    private DeliveryLog log;

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain");
        String prefix = request.getParameter("prefix") == null ? "order-" : request.getParameter("prefix");
        int count;
        int quantity;
        try {
            count = Integer.parseInt(param(request, "count", "1"));
            quantity = Integer.parseInt(param(request, "quantity", "1"));
        } catch (NumberFormatException e) {
            response.sendError(400, "count and quantity must be numbers: " + e.getMessage());
            return;
        }
        for (int i = 1; i <= count; i++) {
            desk.place(new Order(prefix + i, quantity));
        }
        response.getWriter().print("placed " + count);
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain");
        response.getWriter().print(String.join("\n", log.deliveries()));
    }

    private static String param(HttpServletRequest request, String name, String defaultValue) {
        String value = request.getParameter(name);
        return value == null ? defaultValue : value;
    }
}
