package dev.millrace.protocol.selector;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a selector into {@link Token}s (Jakarta Messaging 3.1, section 3.8.1.1).
 *
 * <ul>
 *   <li>String literal: {@code '...'}, a quote inside written {@code ''}; any character, line breaks included.
 *   <li>Exact numeric literal, Java integer literal syntax without underscores: decimal ({@code 57}), hexadecimal
 *       ({@code 0x1F}), octal ({@code 017}), each with an optional {@code L}/{@code l} suffix. Signs are unary
 *       operators, folded into the literal by the parser.
 *   <li>Approximate numeric literal, Java decimal floating-point literal syntax: {@code 7.}, {@code .5},
 *       {@code 95.7}, {@code 7E3}, {@code -57.9E2}, {@code 1.5e-3}, with an optional {@code F/f/D/d} suffix (also
 *       {@code 1f}). Hexadecimal floating point is not accepted.
 *   <li>Identifier: a Java identifier start character then Java identifier part characters (by code point),
 *       identifier-ignorable characters excluded as in {@code JmsIdentifiers}; case-sensitive. A word equal to a
 *       keyword in any ASCII case is that keyword.
 *   <li>Operators {@code = <> < > <= >= + - * / ( ) ,}; whitespace ({@link Character#isWhitespace}) separates.
 *       SQL comments are not supported (section 3.8.1.3): {@code --} and {@code /*} are errors rather than being
 *       read as two operators, so a comment cannot silently turn into arithmetic.
 * </ul>
 *
 * <p>Not thread-safe; one instance per compilation.
 */
final class Lexer {

    private final String text;
    private int pos;

    private Lexer(String text) {
        this.text = text;
    }

    static List<Token> tokenize(String text) {
        Lexer lexer = new Lexer(text);
        List<Token> tokens = new ArrayList<>();
        Token token;
        do {
            token = lexer.next();
            tokens.add(token);
        } while (token.type != TokenType.END);
        return tokens;
    }

    private Token next() {
        while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
            pos++;
        }
        if (pos >= text.length()) {
            return new Token(TokenType.END, "", text.length(), null);
        }
        int start = pos;
        char c = text.charAt(pos);
        if (c == '\'') {
            return string(start);
        }
        if (isDigit(c) || (c == '.' && pos + 1 < text.length() && isDigit(text.charAt(pos + 1)))) {
            return number(start);
        }
        int cp = text.codePointAt(pos);
        if (Character.isJavaIdentifierStart(cp) && !Character.isIdentifierIgnorable(cp)) {
            pos += Character.charCount(cp);
            while (pos < text.length()) {
                int part = text.codePointAt(pos);
                if (!Character.isJavaIdentifierPart(part) || Character.isIdentifierIgnorable(part)) {
                    break;
                }
                pos += Character.charCount(part);
            }
            String word = text.substring(start, pos);
            return new Token(TokenType.keywordOrIdentifier(word), word, start, null);
        }
        return operator(start, c);
    }

    private Token operator(int start, char c) {
        if ((c == '-' || c == '/') && pos + 1 < text.length() && text.charAt(pos + 1) == (c == '-' ? '-' : '*')) {
            // "a = 1 -- note" would otherwise parse as a = 1 - (-note): refuse what looks like an SQL comment
            String token = text.substring(start, start + 2);
            throw new SelectorSyntaxException(text, start, token, "Unexpected '" + token + "'",
                    "SQL comments are not supported" + (c == '-' ? "; write - - for a double negation" : ""));
        }
        pos++;
        switch (c) {
            case '=': return op(TokenType.EQ, start);
            case '+': return op(TokenType.PLUS, start);
            case '-': return op(TokenType.MINUS, start);
            case '*': return op(TokenType.STAR, start);
            case '/': return op(TokenType.SLASH, start);
            case '(': return op(TokenType.LPAREN, start);
            case ')': return op(TokenType.RPAREN, start);
            case ',': return op(TokenType.COMMA, start);
            case '<':
                if (peek('>')) {
                    return op(TokenType.NE, start);
                }
                return peek('=') ? op(TokenType.LE, start) : op(TokenType.LT, start);
            case '>':
                return peek('=') ? op(TokenType.GE, start) : op(TokenType.GT, start);
            default:
                int cp = text.codePointAt(start);
                String bad = new String(Character.toChars(cp));
                String hint = null;
                if (c == '!' && peek('=')) {
                    bad = "!=";
                    hint = "not equal is written <>";
                } else if (c == '"') {
                    hint = "string literals use single quotes";
                }
                throw new SelectorSyntaxException(text, start, bad, "Unexpected '" + bad + "'", hint);
        }
    }

    private boolean peek(char expected) {
        if (pos < text.length() && text.charAt(pos) == expected) {
            pos++;
            return true;
        }
        return false;
    }

    private Token op(TokenType type, int start) {
        return new Token(type, text.substring(start, pos), start, null);
    }

    private Token string(int start) {
        StringBuilder value = new StringBuilder();
        pos++;
        while (true) {
            if (pos >= text.length()) {
                String token = text.substring(start);
                throw new SelectorSyntaxException(text, start, token, "Unterminated string literal",
                        "a quote inside a string literal is written ''");
            }
            char c = text.charAt(pos++);
            if (c == '\'') {
                if (pos < text.length() && text.charAt(pos) == '\'') {
                    value.append('\'');
                    pos++;
                } else {
                    break;
                }
            } else {
                value.append(c);
            }
        }
        return new Token(TokenType.STRING, text.substring(start, pos), start, value.toString());
    }

    private Token number(int start) {
        boolean approximate = false;
        if (text.charAt(pos) == '0' && pos + 1 < text.length() && (text.charAt(pos + 1) | 0x20) == 'x') {
            pos += 2;
            int digits = pos;
            while (pos < text.length() && Character.digit(text.charAt(pos), 16) >= 0) {
                pos++;
            }
            if (pos == digits) {
                throw malformedNumber(start, "a hexadecimal literal needs digits after 0x");
            }
            skipSuffix("Ll");
        } else {
            skipDigits();
            if (pos < text.length() && text.charAt(pos) == '.') {
                approximate = true;
                pos++;
                skipDigits();
            }
            if (pos < text.length() && (text.charAt(pos) | 0x20) == 'e') {
                approximate = true;
                pos++;
                if (pos < text.length() && (text.charAt(pos) == '+' || text.charAt(pos) == '-')) {
                    pos++;
                }
                int digits = pos;
                skipDigits();
                if (pos == digits) {
                    throw malformedNumber(start, "an exponent needs digits");
                }
            }
            if (skipSuffix("FfDd")) {
                approximate = true;
            } else if (!approximate) {
                skipSuffix("Ll");
            }
        }
        if (pos < text.length() && Character.isJavaIdentifierPart(text.codePointAt(pos))) {
            throw malformedNumber(start, null);
        }
        return new Token(approximate ? TokenType.APPROXIMATE : TokenType.EXACT, text.substring(start, pos), start,
                null);
    }

    private void skipDigits() {
        while (pos < text.length() && isDigit(text.charAt(pos))) {
            pos++;
        }
    }

    private boolean skipSuffix(String suffixes) {
        if (pos < text.length() && suffixes.indexOf(text.charAt(pos)) >= 0) {
            pos++;
            return true;
        }
        return false;
    }

    private SelectorSyntaxException malformedNumber(int start, String hint) {
        int end = pos;
        while (end < text.length() && Character.isJavaIdentifierPart(text.charAt(end))) {
            end++;
        }
        String token = text.substring(start, Math.max(end, start + 1));
        return new SelectorSyntaxException(text, start, token, "Malformed number '" + token + "'", hint);
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    /**
     * The value of an exact numeric literal as Java reads a {@code long} literal: decimal values must fit (with
     * {@code 9223372036854775808} allowed only when negated); hexadecimal and octal ones are 64-bit two's complement.
     *
     * @throws NumberFormatException if out of range or not valid octal
     */
    static long exactValue(String literal, boolean negated) {
        String digits = literal;
        char last = digits.charAt(digits.length() - 1);
        if (last == 'L' || last == 'l') {
            digits = digits.substring(0, digits.length() - 1);
        }
        long value;
        if (digits.length() > 2 && (digits.charAt(1) | 0x20) == 'x') {
            value = Long.parseUnsignedLong(digits.substring(2), 16);
        } else if (digits.length() > 1 && digits.charAt(0) == '0') {
            value = Long.parseUnsignedLong(digits.substring(1), 8);
        } else {
            return Long.parseLong(negated ? "-" + digits : digits);
        }
        return negated ? -value : value;
    }

    /**
     * The value of an approximate numeric literal; an {@code F}/{@code f} suffix rounds to {@code float} first (then
     * widens, as Java would compare it with a double).
     *
     * @throws NumberFormatException if the literal overflows to infinity or a nonzero literal underflows to zero
     */
    static double approximateValue(String literal) {
        char last = literal.charAt(literal.length() - 1);
        double value = (last == 'F' || last == 'f') ? Float.parseFloat(literal) : Double.parseDouble(literal);
        if (Double.isInfinite(value)) {
            throw new NumberFormatException("too large");
        }
        if (value == 0) {
            String mantissa = literal.split("[eE]")[0];
            for (int i = 0; i < mantissa.length(); i++) {
                char c = mantissa.charAt(i);
                if (c >= '1' && c <= '9') {
                    throw new NumberFormatException("too small");
                }
            }
        }
        return value;
    }
}
