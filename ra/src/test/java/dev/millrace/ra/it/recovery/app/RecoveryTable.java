package dev.millrace.ra.it.recovery.app;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;

/**
 * Creates the table {@link RecoveryMdb} writes to (once: the database file outlives the server), and reads it. Its
 * SQL is what H2 and Derby both understand (no {@code IF NOT EXISTS}: the table is looked up first).
 */
@Singleton
@Startup
public class RecoveryTable {

    /**
     * The reference name ({@code java:comp/env}) of the server's XA data source, which each suite's {@code web.xml}
     * maps to the server's: a database in a file (WildFly's H2, GlassFish's Derby), so that its prepared branches
     * survive a kill.
     */
    public static final String DATA_SOURCE = "jdbc/MillraceRecoveryXA";

    @Resource(name = DATA_SOURCE)
    private DataSource dataSource;

    @PostConstruct
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    void create() {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                ResultSet table = c.getMetaData().getTables(null, null, "RECOVERY_ROWS", null)) {
            if (!table.next()) {
                s.execute("CREATE TABLE recovery_rows(id INT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
                        + "delivery VARCHAR(200))");
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The committed rows, oldest first. */
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    public List<String> rows() {
        List<String> rows = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT delivery FROM recovery_rows ORDER BY id")) {
            while (r.next()) {
                rows.add(r.getString(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return rows;
    }
}
