package dev.millrace.ra.it.app;

import java.io.IOException;

import jakarta.ejb.EJB;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/** {@code /defined/send?body=}: {@link DefinedResourcesBean#send}. */
@WebServlet("/defined/send")
public class DefinedServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @EJB
    private DefinedResourcesBean bean;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain");
        try {
            bean.send(request.getParameter("body"));
            response.getWriter().print("sent");
        } catch (RuntimeException e) {
            response.setStatus(500);
            response.getWriter().print(e);
        }
    }
}
