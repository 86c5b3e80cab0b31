package dev.millrace.samples.mdb;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** The sample's Jakarta REST application: its resources ({@link OrdersResource}) from the war's root. */
@ApplicationPath("/")
public class OrdersApplication extends Application {
}
