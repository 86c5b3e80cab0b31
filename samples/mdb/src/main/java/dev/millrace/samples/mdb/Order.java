package dev.millrace.samples.mdb;

/**
 * An order as it travels on the {@code orders} queue: the text {@code <id>;<quantity>}, e.g. {@code order-7;3}.
 *
 * @param id the order's id
 * @param quantity how many items; an order is valid only with at least one
 */
public record Order(String id, int quantity) {

    /** The message body of this order. */
    public String toText() {
        return id + ";" + quantity;
    }

    /**
     * Reads an order from its message body.
     *
     * @throws IllegalArgumentException if {@code text} is not {@code <id>;<quantity>}
     */
    public static Order parse(String text) {
        int separator = text == null ? -1 : text.lastIndexOf(';');
        if (separator <= 0) {
            throw new IllegalArgumentException("not an order (<id>;<quantity>): '" + text + "'");
        }
        try {
            return new Order(text.substring(0, separator), Integer.parseInt(text.substring(separator + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not an order, quantity is not a number: '" + text + "'", e);
        }
    }
}
