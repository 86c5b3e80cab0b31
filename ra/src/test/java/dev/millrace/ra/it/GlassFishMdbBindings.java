package dev.millrace.ra.it;

import java.util.Arrays;
import java.util.stream.Collectors;

import jakarta.ejb.MessageDriven;

/** GlassFish's deployment descriptor that gives message-driven beans to the Millrace adapter, not its own JMS one. */
public final class GlassFishMdbBindings {

    /** The module name of the deployed .rar, which beans and pools name as their resource adapter. */
    public static final String ADAPTER = "millrace-ra";

    private GlassFishMdbBindings() {
    }

    /** {@code glassfish-ejb-jar.xml} binding each message-driven bean among {@code classes} to the adapter. */
    public static String of(Class<?>... classes) {
        String beans = Arrays.stream(classes).filter(c -> c.isAnnotationPresent(MessageDriven.class))
                .map(c -> """
                                <ejb>
                                    <ejb-name>%s</ejb-name>
                                    <mdb-resource-adapter>
                                        <resource-adapter-mid>%s</resource-adapter-mid>
                                    </mdb-resource-adapter>
                                </ejb>
                        """.formatted(c.getSimpleName(), ADAPTER))
                .collect(Collectors.joining());
        return """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE glassfish-ejb-jar PUBLIC "-//GlassFish.org//DTD GlassFish Application Server 3.1 EJB 3.1//EN"
                        "http://glassfish.org/dtds/glassfish-ejb-jar_3_1-1.dtd">
                <glassfish-ejb-jar>
                    <enterprise-beans>
                %s    </enterprise-beans>
                </glassfish-ejb-jar>
                """.formatted(beans);
    }
}
