package dev.millrace.protocol.selector;

/**
 * One token: its type, its source text and where it starts. String literals carry their value (quotes removed,
 * {@code ''} folded); numeric literals are converted by the parser, which knows whether a unary minus precedes them.
 */
final class Token {

    final TokenType type;
    final String text;
    final int position;
    /** String literal value; null for other tokens. */
    final String value;

    Token(TokenType type, String text, int position, String value) {
        this.type = type;
        this.text = text;
        this.position = position;
        this.value = value;
    }

    /** How an error message shows this token. */
    String describe() {
        return type == TokenType.END ? SelectorSyntaxException.END : text;
    }

    @Override
    public String toString() {
        return type + "(" + text + ")@" + position;
    }
}
