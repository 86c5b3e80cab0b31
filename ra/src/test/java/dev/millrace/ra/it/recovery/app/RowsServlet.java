package dev.millrace.ra.it.recovery.app;

import java.io.IOException;

import jakarta.ejb.EJB;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/** {@code GET /rows}: the rows {@link RecoveryMdb} committed, one a line; answers once the application is up. */
@WebServlet("/rows")
public class RowsServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @EJB
    private RecoveryTable table;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain");
        response.getWriter().print(String.join("\n", table.rows()));
    }
}
