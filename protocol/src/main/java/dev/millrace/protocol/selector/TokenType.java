package dev.millrace.protocol.selector;

/** The tokens of the message selector language; keywords are matched case-insensitively (ASCII only). */
enum TokenType {
    STRING, EXACT, APPROXIMATE, IDENTIFIER,
    NOT, AND, OR, BETWEEN, LIKE, IN, IS, NULL, TRUE, FALSE, ESCAPE,
    EQ, NE, LT, GT, LE, GE, PLUS, MINUS, STAR, SLASH, LPAREN, RPAREN, COMMA,
    END;

    private static final TokenType[] KEYWORDS = {NOT, AND, OR, BETWEEN, LIKE, IN, IS, NULL, TRUE, FALSE, ESCAPE};

    /** The keyword spelled {@code word} in any ASCII case, or {@link #IDENTIFIER}. */
    static TokenType keywordOrIdentifier(String word) {
        for (TokenType keyword : KEYWORDS) {
            if (asciiEqualsIgnoreCase(keyword.name(), word)) {
                return keyword;
            }
        }
        return IDENTIFIER;
    }

    boolean isKeyword() {
        return ordinal() >= NOT.ordinal() && ordinal() <= ESCAPE.ordinal();
    }

    /**
     * Case-insensitive for ASCII letters only: {@code String.equalsIgnoreCase} would take the dotless {@code ı} of
     * {@code "ın"} for {@code IN}.
     */
    private static boolean asciiEqualsIgnoreCase(String upper, String word) {
        if (upper.length() != word.length()) {
            return false;
        }
        for (int i = 0; i < word.length(); i++) {
            char c = word.charAt(i);
            if (c >= 'a' && c <= 'z') {
                c = (char) (c - 'a' + 'A');
            }
            if (c != upper.charAt(i)) {
                return false;
            }
        }
        return true;
    }
}
