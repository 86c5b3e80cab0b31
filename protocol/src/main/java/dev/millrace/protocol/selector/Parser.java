package dev.millrace.protocol.selector;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Recursive-descent parser for the message selector grammar of Jakarta Messaging 3.1, section 3.8.1.1, producing
 * the evaluator tree directly. Precedence, loosest first:
 *
 * <pre>
 * selector       := or END
 * or             := and (OR and)*
 * and            := not (AND not)*
 * not            := NOT not | predicate
 * predicate      := additive [ (= | &lt;&gt; | &lt; | &gt; | &lt;= | &gt;=) additive
 *                            | [NOT] BETWEEN additive AND additive
 *                            | [NOT] IN '(' string (',' string)* ')'
 *                            | [NOT] LIKE string [ESCAPE string]
 *                            | IS [NOT] NULL ]
 * additive       := multiplicative ((+ | -) multiplicative)*
 * multiplicative := unary ((* | /) unary)*
 * unary          := (+ | -) unary | primary
 * primary        := string | exact | approximate | TRUE | FALSE | identifier | '(' or ')'
 * </pre>
 *
 * <p>Beyond the shape, the parser checks what the grammar's names imply about operand types whenever a literal or an
 * operator makes the type known ({@link Expr.Kind}): operands of AND/OR/NOT and the whole selector are conditions or
 * identifiers (a boolean property may stand alone); arithmetic and BETWEEN take numbers or identifiers; {@code <},
 * {@code >}, {@code <=}, {@code >=} take no string or boolean literal; LIKE, IN and IS NULL apply to an identifier;
 * LIKE patterns, ESCAPE and IN list items are string literals. Identifiers are checked at evaluation time only.
 *
 * <p>Not thread-safe; one instance per compilation.
 */
final class Parser {

    /**
     * Header fields a selector may not read (section 3.8.1.1 restricts header references to JMSDeliveryMode,
     * JMSPriority, JMSMessageID, JMSTimestamp, JMSCorrelationID and JMSType); they compile to a NULL value.
     */
    static final Set<String> NON_SELECTABLE_HEADERS = Set.of(
            "JMSDestination", "JMSReplyTo", "JMSRedelivered", "JMSExpiration", "JMSDeliveryTime");

    /** The highest tree a selector may make; see {@link #nested}. */
    static final int MAX_HEIGHT = 64;

    private final String text;
    private final List<Token> tokens;
    private final Set<String> identifiers = new LinkedHashSet<>();
    private int index;
    /** Open parentheses, NOTs and signs being parsed: the parser's own recursion, limited like the tree. */
    private int depth;

    private Parser(String text) {
        this.text = text;
        this.tokens = Lexer.tokenize(text);
    }

    /** Parses {@code text} (not blank); the identifiers read are added to {@code identifiersOut}. */
    static Expr parse(String text, Set<String> identifiersOut) {
        Parser parser = new Parser(text);
        Expr root = parser.or();
        if (parser.peek().type != TokenType.END) {
            throw parser.unexpected(parser.peek(), isCondition(root)
                    ? "expected AND, OR or the end of the selector" : "expected a comparison operator");
        }
        parser.requireCondition(root);
        identifiersOut.addAll(parser.identifiers);
        return root;
    }

    private Expr or() {
        Expr first = and();
        if (peek().type != TokenType.OR) {
            return first;
        }
        List<Expr> operands = new ArrayList<>();
        operands.add(first);
        while (peek().type == TokenType.OR) {
            requireCondition(operands.get(operands.size() - 1));
            next();
            operands.add(and());
        }
        requireCondition(operands.get(operands.size() - 1));
        return nested(new Logical.Or(operands), operands.toArray(new Expr[0]));
    }

    private Expr and() {
        Expr first = not();
        if (peek().type != TokenType.AND) {
            return first;
        }
        List<Expr> operands = new ArrayList<>();
        operands.add(first);
        while (peek().type == TokenType.AND) {
            requireCondition(operands.get(operands.size() - 1));
            next();
            operands.add(not());
        }
        requireCondition(operands.get(operands.size() - 1));
        return nested(new Logical.And(operands), operands.toArray(new Expr[0]));
    }

    private Expr not() {
        if (peek().type != TokenType.NOT) {
            return predicate();
        }
        Token not = next();
        enter();
        Expr operand = not();
        depth--;
        requireCondition(operand);
        return nested(new Logical.Not(not.position, not.text, operand), operand);
    }

    /**
     * Records {@code node}'s height (1 + its highest child's) and refuses a tree higher than {@value #MAX_HEIGHT}:
     * selectors may come from any client, and evaluation recurses once per level (an arithmetic node even asks its
     * operands' types again, so the cost grows with the square of the height). AND and OR chains are flat, so the
     * limit bites only on nesting: parentheses, NOT, signs, arithmetic chains.
     */
    private Expr nested(Expr node, Expr... children) {
        int height = 0;
        for (Expr child : children) {
            height = Math.max(height, child.height);
        }
        node.height = height + 1;
        if (node.height > MAX_HEIGHT) {
            throw tooDeep();
        }
        return node;
    }

    /** Before recursing into a parenthesis, NOT or sign: the parser must not overflow the stack either. */
    private void enter() {
        if (++depth > MAX_HEIGHT) {
            throw tooDeep();
        }
    }

    private SelectorSyntaxException tooDeep() {
        Token at = peek();
        return new SelectorSyntaxException(text, at.position, at.describe(), "Selector nests too deeply",
                "more than " + MAX_HEIGHT + " levels of parentheses, NOT, signs or arithmetic");
    }

    private Expr predicate() {
        Expr left = additive();
        Token op = peek();
        switch (op.type) {
            case EQ:
            case NE:
            case LT:
            case GT:
            case LE:
            case GE:
                next();
                Expr right = additive();
                return nested(comparison(op, left, right), left, right);
            case IS:
                next();
                boolean not = accept(TokenType.NOT);
                expect(TokenType.NULL, "expected NULL or NOT NULL after IS");
                return nested(new IsNull(identifierOperand(left, op), not), left);
            case NOT:
                next();
                TokenType after = peek().type;
                if (after != TokenType.BETWEEN && after != TokenType.LIKE && after != TokenType.IN) {
                    throw unexpected(peek(), "expected BETWEEN, LIKE or IN after NOT");
                }
                return negatable(left, next(), true);
            case BETWEEN:
            case LIKE:
            case IN:
                return negatable(left, next(), false);
            default:
                return left;
        }
    }

    private Expr negatable(Expr left, Token op, boolean negated) {
        switch (op.type) {
            case BETWEEN:
                requireNumeric(left, op);
                Expr low = additive();
                requireNumeric(low, op);
                expect(TokenType.AND, "expected AND between the bounds of BETWEEN");
                Expr high = additive();
                requireNumeric(high, op);
                return nested(new Between(left, low, high, negated), left, low, high);
            case LIKE:
                return nested(like(identifierOperand(left, op), negated), left);
            default:
                return nested(in(identifierOperand(left, op), negated), left);
        }
    }

    private Expr comparison(Token op, Expr left, Expr right) {
        int operator = op.type.ordinal() - TokenType.EQ.ordinal();
        if (operator == Comparison.EQ || operator == Comparison.NE) {
            if (isBooleanAgainstValue(left, right) || isBooleanAgainstValue(right, left)) {
                throw blame(right instanceof Literal ? right : left, op,
                        "a boolean compares only with a boolean (TRUE, FALSE, a condition or an identifier)");
            }
            boolean equals = operator == Comparison.EQ;
            if (left instanceof Identifier && isStringLiteral(right)) {
                return new StringEquality((Identifier) left, ((Literal) right).string(), equals, left.position,
                        left.token);
            }
            if (right instanceof Identifier && isStringLiteral(left)) {
                return new StringEquality((Identifier) right, ((Literal) left).string(), equals, left.position,
                        left.token);
            }
        } else {
            for (Expr side : new Expr[] {left, right}) {
                if (side.kind() == Expr.Kind.STRING || side.kind() == Expr.Kind.CONDITION) {
                    throw blame(side, op, "strings and booleans compare only with = and <>");
                }
            }
        }
        return new Comparison(operator, left, right);
    }

    private Expr like(Identifier identifier, boolean negated) {
        Token pattern = expect(TokenType.STRING, "expected a string literal pattern after LIKE");
        int escape = -1;
        if (accept(TokenType.ESCAPE)) {
            Token escapeToken = expect(TokenType.STRING, "expected a one-character string literal after ESCAPE");
            if (escapeToken.value.length() != 1) {
                throw new SelectorSyntaxException(text, escapeToken.position, escapeToken.text,
                        "Invalid escape character " + escapeToken.text, "ESCAPE takes exactly one character");
            }
            escape = escapeToken.value.charAt(0);
        }
        try {
            return new Like(identifier, pattern.text + (escape < 0 ? "" : " ESCAPE '" + (char) escape + "'"),
                    LikePattern.compile(pattern.value, escape), negated);
        } catch (IllegalArgumentException e) {
            throw new SelectorSyntaxException(text, pattern.position, pattern.text,
                    "Invalid LIKE pattern " + pattern.text, e.getMessage());
        }
    }

    private Expr in(Identifier identifier, boolean negated) {
        expect(TokenType.LPAREN, "expected '(' after IN");
        List<String> literals = new ArrayList<>();
        do {
            literals.add(expect(TokenType.STRING, "IN lists hold string literals only").value);
        } while (accept(TokenType.COMMA));
        expect(TokenType.RPAREN, "expected ',' or ')' in the IN list");
        return new In(identifier, literals, negated);
    }

    private Expr additive() {
        Expr left = multiplicative();
        while (peek().type == TokenType.PLUS || peek().type == TokenType.MINUS) {
            Token op = next();
            requireNumeric(left, op);
            Expr right = multiplicative();
            requireNumeric(right, op);
            left = nested(new Arithmetic(op.text.charAt(0), left, right), left, right);
        }
        return left;
    }

    private Expr multiplicative() {
        Expr left = unary();
        while (peek().type == TokenType.STAR || peek().type == TokenType.SLASH) {
            Token op = next();
            requireNumeric(left, op);
            Expr right = unary();
            requireNumeric(right, op);
            left = nested(new Arithmetic(op.text.charAt(0), left, right), left, right);
        }
        return left;
    }

    private Expr unary() {
        if (peek().type != TokenType.PLUS && peek().type != TokenType.MINUS) {
            return primary();
        }
        Token sign = next();
        boolean negative = sign.type == TokenType.MINUS;
        Token literal = peek();
        if (literal.type == TokenType.EXACT) {
            next();
            return Literal.exact(sign.position, source(sign, literal), exact(literal, negative));
        }
        enter();
        Expr operand = unary();
        depth--;
        requireNumeric(operand, sign);
        if (operand instanceof Literal && operand.kind() == Expr.Kind.NUMERIC) {
            String token = source(sign, operand);
            if (operand.type(null) == ValueType.EXACT) {
                long v = operand.longValue(null);
                return Literal.exact(sign.position, token, negative ? -v : v);
            }
            double v = operand.doubleValue(null);
            return Literal.approximate(sign.position, token, negative ? -v : v);
        }
        return nested(new UnarySign(sign.position, sign.text, negative, operand), operand);
    }

    private Expr primary() {
        Token t = next();
        switch (t.type) {
            case STRING:
                return Literal.string(t.position, t.text, t.value);
            case EXACT:
                return Literal.exact(t.position, t.text, exact(t, false));
            case APPROXIMATE:
                try {
                    return Literal.approximate(t.position, t.text, Lexer.approximateValue(t.text));
                } catch (NumberFormatException e) {
                    throw new SelectorSyntaxException(text, t.position, t.text, "Numeric literal " + t.text
                            + " out of range", "outside the range of double");
                }
            case TRUE:
            case FALSE:
                return Literal.bool(t.position, t.text, t.type == TokenType.TRUE);
            case IDENTIFIER:
                String name = t.text.intern(); // one object per name: contexts may memoize by identity
                identifiers.add(name);
                return new Identifier(t.position, name, NON_SELECTABLE_HEADERS.contains(name));
            case LPAREN:
                enter();
                Expr inner = or();
                depth--;
                expect(TokenType.RPAREN, isCondition(inner) || inner.kind() == Expr.Kind.NUMERIC
                        ? "expected ')'" : "expected a comparison operator or ')'");
                return inner;
            case NULL:
                throw unexpected(t, "NULL is only allowed in IS [NOT] NULL");
            default:
                throw unexpected(t, t.type.isKeyword()
                        ? "expected a value; " + t.type + " is a reserved word" : "expected a value");
        }
    }

    private long exact(Token literal, boolean negative) {
        try {
            return Lexer.exactValue(literal.text, negative);
        } catch (NumberFormatException e) {
            boolean octal = literal.text.length() > 1 && literal.text.charAt(0) == '0'
                    && (literal.text.charAt(1) | 0x20) != 'x' && literal.text.matches("[0-9]+[lL]?")
                    && literal.text.matches(".*[89].*");
            throw new SelectorSyntaxException(text, literal.position, literal.text,
                    "Invalid numeric literal " + literal.text, octal ? "a leading 0 makes it octal"
                    : "outside the range of long");
        }
    }

    private String source(Token from, Expr to) {
        return text.substring(from.position, to.position + to.token.length());
    }

    private String source(Token from, Token to) {
        return text.substring(from.position, to.position + to.text.length());
    }

    private static boolean isCondition(Expr e) {
        return e.kind() == Expr.Kind.CONDITION || e.kind() == Expr.Kind.ANY;
    }

    /** Whether {@code bool} is known to be boolean-typed and {@code other} known to be a number or a string. */
    private static boolean isBooleanAgainstValue(Expr bool, Expr other) {
        return bool.kind() == Expr.Kind.CONDITION
                && (other.kind() == Expr.Kind.NUMERIC || other.kind() == Expr.Kind.STRING);
    }

    private static boolean isStringLiteral(Expr e) {
        return e instanceof Literal && e.kind() == Expr.Kind.STRING;
    }

    /** A value that is known not to be a truth value may not stand where a condition must: blame what follows. */
    private void requireCondition(Expr e) {
        if (!isCondition(e)) {
            throw unexpected(peek(), "expected a comparison operator");
        }
    }

    private void requireNumeric(Expr e, Token op) {
        if (e.kind() == Expr.Kind.STRING) {
            throw blame(e, op, "a string cannot be an operand of " + op.text.toUpperCase(java.util.Locale.ROOT));
        }
        if (e.kind() == Expr.Kind.CONDITION) {
            throw blame(e, op, "a condition cannot be an operand of " + op.text.toUpperCase(java.util.Locale.ROOT));
        }
    }

    private Identifier identifierOperand(Expr left, Token op) {
        if (left instanceof Identifier) {
            return (Identifier) left;
        }
        throw blame(left, op, op.text.toUpperCase(java.util.Locale.ROOT) + " applies to an identifier");
    }

    /** An error at a literal operand when there is one (its token is the culprit), else at the operator. */
    private SelectorSyntaxException blame(Expr operand, Token op, String hint) {
        if (operand instanceof Literal) {
            return new SelectorSyntaxException(text, operand.position, operand.token,
                    "Unexpected '" + operand.token + "'", hint);
        }
        return unexpected(op, hint);
    }

    private SelectorSyntaxException unexpected(Token t, String hint) {
        String problem = t.type == TokenType.END ? "Unexpected end of selector" : "Unexpected '" + t.text + "'";
        return new SelectorSyntaxException(text, t.position, t.describe(), problem, hint);
    }

    private Token peek() {
        return tokens.get(index);
    }

    private Token next() {
        Token t = tokens.get(index);
        if (t.type != TokenType.END) {
            index++;
        }
        return t;
    }

    private boolean accept(TokenType type) {
        if (peek().type == type) {
            next();
            return true;
        }
        return false;
    }

    private Token expect(TokenType type, String hint) {
        if (peek().type != type) {
            throw unexpected(peek(), hint);
        }
        return next();
    }
}
