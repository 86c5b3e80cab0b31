package dev.millrace.ra.it.app;

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
 * Creates the table {@link DatabaseMdb} writes to, and reads it for {@link TestServlet}. Its SQL is what both test
 * databases understand: WildFly's H2 and GlassFish's Derby (no {@code IF NOT EXISTS}: the table is looked up first).
 */
@Singleton
@Startup
public class OrdersTable {

    @Resource(name = AppResources.DATA_SOURCE)
    private DataSource dataSource;

    @PostConstruct
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    void create() {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                ResultSet table = c.getMetaData().getTables(null, null, "IT_ROWS", null)) {
            if (!table.next()) {
                s.execute("CREATE TABLE it_rows(id INT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body VARCHAR(200))");
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    public List<String> rows() {
        List<String> rows = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT body FROM it_rows ORDER BY id")) {
            while (r.next()) {
                rows.add(r.getString(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return rows;
    }
}
