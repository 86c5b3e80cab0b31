package dev.millrace.samples.mdb;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * The application's front door, a Jakarta REST resource:
 * <ul>
 *   <li>{@code POST /orders?prefix=order-&count=20&quantity=2} places {@code count} orders
 *       {@code <prefix>1..<prefix><count>}, each in its own transaction ({@link OrderDesk}), and answers
 *       {@code placed <count>} (400 when count or quantity is not a number);</li>
 *   <li>{@code GET /orders} lists {@link OrderProcessor}'s deliveries ({@link DeliveryLog}), one a line.</li>
 * </ul>
 */
@Path("orders")
@RequestScoped
public class OrdersResource {

    @Inject
    private OrderDesk desk;

    @Inject
    private DeliveryLog log;

    @POST
    @Produces(MediaType.TEXT_PLAIN)
    public Response place(@QueryParam("prefix") @DefaultValue("order-") String prefix,
                          @QueryParam("count") @DefaultValue("1") String count,
                          @QueryParam("quantity") @DefaultValue("1") String quantity) {
        int orders;
        int each;
        try {
            orders = Integer.parseInt(count);
            each = Integer.parseInt(quantity);
        } catch (NumberFormatException e) {
            return Response.status(Response.Status.BAD_REQUEST)
                    .entity("count and quantity must be numbers: " + e.getMessage()).build();
        }
        for (int i = 1; i <= orders; i++) {
            desk.place(new Order(prefix + i, each));
        }
        return Response.ok("placed " + orders).build();
    }

    @GET
    @Produces(MediaType.TEXT_PLAIN)
    public String deliveries() {
        return String.join("\n", log.deliveries());
    }
}
