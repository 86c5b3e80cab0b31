package dev.millrace.protocol.selector;

import static dev.millrace.protocol.selector.Selectors.eval;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Syntax errors (position, token, message), literals, and the case rules. */
@Timeout(20)
class SelectorSyntaxTest {

    private static SelectorSyntaxException error(String selector) {
        SelectorSyntaxException e = catchThrowableOfType(() -> Selector.compile(selector),
                SelectorSyntaxException.class);
        assertThat(e).as("compiling [%s] should fail", selector).isNotNull();
        assertThat(e.selector()).isEqualTo(selector);
        return e;
    }

    @Test
    void shouldReportTheUnexpectedTokenAndItsPosition() {
        SelectorSyntaxException e = error("color = 'red' AND AND size > 2");
        assertThat(e.position()).isEqualTo(18);
        assertThat(e.token()).isEqualTo("AND");
        assertThat(e.getMessage()).isEqualTo(
                "Unexpected 'AND' at position 18 in selector: color = 'red' AND AND size > 2 (expected a value; AND "
                        + "is a reserved word)");
    }

    @Test
    void shouldReportADanglingOperatorAtTheEnd() {
        SelectorSyntaxException e = error("a = 1 AND");
        assertThat(e.position()).isEqualTo(9);
        assertThat(e.token()).isEqualTo(SelectorSyntaxException.END);
        assertThat(e.getMessage()).startsWith("Unexpected end of selector at position 9 in selector: a = 1 AND");
        assertThat(error("a >").position()).isEqualTo(3);
        assertThat(error("a = 1 +").position()).isEqualTo(7);
        assertThat(error("NOT").position()).isEqualTo(3);
    }

    @Test
    void shouldReportAnUnterminatedStringAtItsOpeningQuote() {
        SelectorSyntaxException e = error("name = 'abc");
        assertThat(e.position()).isEqualTo(7);
        assertThat(e.token()).isEqualTo("'abc");
        assertThat(e.getMessage()).startsWith("Unterminated string literal at position 7");
        assertThat(error("name = 'it''s").token()).isEqualTo("'it''s");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "(a = 1              | 6  | end of selector",
        "a = 1)              | 5  | )",
        "((a = 1)            | 8  | end of selector",
        "a IN ('x'           | 9  | end of selector",
        "()                  | 1  | )",
        "a = (1 + 2          | 10 | end of selector",
    })
    void shouldReportUnbalancedParentheses(String selector, int position, String token) {
        SelectorSyntaxException e = error(selector);
        assertThat(e.position()).isEqualTo(position);
        assertThat(e.token()).isEqualTo(token);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "a LIKE 'x' ESCAPE 'ab'   | 18 | 'ab'",
        "a LIKE 'x' ESCAPE ''     | 18 | ''",
        "a LIKE 'x!y' ESCAPE '!'  | 7  | 'x!y'",
        "a LIKE 'x!' ESCAPE '!'   | 7  | 'x!'",
        "a LIKE 'x' ESCAPE 5      | 18 | 5",
        "a LIKE b                 | 7  | b",
        "a LIKE 5                 | 7  | 5",
    })
    void shouldRefuseBadLikePatternsAndEscapes(String selector, int position, String token) {
        SelectorSyntaxException e = error(selector);
        assertThat(e.position()).isEqualTo(position);
        assertThat(e.token()).isEqualTo(token);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "AND = 1          | 0  | AND",
        "a = null         | 4  | null",
        "NULL IS NULL     | 0  | NULL",
        "between > 1      | 0  | between",
        "a = 1 OR like    | 9  | like",
        "escape = 'x'     | 0  | escape",
        "x IN ('a') OR In = 'b' | 14 | In",
    })
    void shouldRefuseReservedWordsAsIdentifiers(String selector, int position, String token) {
        SelectorSyntaxException e = error(selector);
        assertThat(e.position()).isEqualTo(position);
        assertThat(e.token()).isEqualTo(token);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "a IN ('x', 1)       | 11 | 1",
        "a IN (1)            | 6  | 1",
        "a IN ()             | 6  | )",
        "a IN ('x' 'y')      | 10 | 'y'",
        "a IN 'x'            | 5  | 'x'",
        "a NOT IN (b)        | 10 | b",
    })
    void shouldRefuseInListsThatAreNotStringLiterals(String selector, int position, String token) {
        SelectorSyntaxException e = error(selector);
        assertThat(e.position()).isEqualTo(position);
        assertThat(e.token()).isEqualTo(token);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "a < 'x'               | 4  | 'x'",
        "'x' >= a              | 0  | 'x'",
        "TRUE < FALSE          | 0  | TRUE",
        "(a = 1) < 2           | 8  | <",
        "'a' + 1 = 2           | 0  | 'a'",
        "1 * 'b' = 2           | 4  | 'b'",
        "-'b' = 2              | 1  | 'b'",
        "(a = 1) + 1 = 2       | 8  | +",
        "a BETWEEN 'a' AND 'c' | 10 | 'a'",
        "TRUE BETWEEN 1 AND 2  | 0  | TRUE",
        "'abc' LIKE 'a%'       | 0  | 'abc'",
        "5 IN ('a')            | 0  | 5",
        "a + 1 IS NULL         | 6  | IS",
        "'x' IS NOT NULL       | 0  | 'x'",
        "a + 1                 | 5  | end of selector",
        "5                     | 1  | end of selector",
        "'abc'                 | 5  | end of selector",
        "a = 1 AND 5           | 11 | end of selector",
        "NOT 5 OR a            | 6  | OR",
        "(a + 1) AND b         | 8  | AND",
        "a = 1 = 2             | 6  | =",
        "a NOT = 1             | 6  | =",
        "a IS 1                | 5  | 1",
        "a BETWEEN 1 2         | 12 | 2",
        "a BETWEEN 1 OR 2      | 12 | OR",
        "a b                   | 2  | b",
        "a = 1 b = 2           | 6  | b",
    })
    void shouldRefuseExpressionsTheGrammarRulesOut(String selector, int position, String token) {
        SelectorSyntaxException e = error(selector);
        assertThat(e.position()).as(e.getMessage()).isEqualTo(position);
        assertThat(e.token()).as(e.getMessage()).isEqualTo(token);
    }

    /**
     * JMS 3.1 section 3.8.1.1 (booleans compare only with booleans): {@code =} and {@code <>} between a side the
     * compiler knows to be boolean and one it knows to be a number or a string are invalid selectors.
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "TRUE = 0              | 7  | 0",
        "FALSE = 0             | 8  | 0",
        "TRUE <> 1             | 8  | 1",
        "0 = TRUE              | 4  | TRUE",
        "FALSE = 'x'           | 8  | 'x'",
        "'x' <> TRUE           | 7  | TRUE",
        "(a = 1) = 1           | 10 | 1",
        "(a > 1) <> 2.5        | 11 | 2.5",
        "TRUE = 1 + 2          | 0  | TRUE",
        "(a = 1) = b + 1       | 8  | =",
        "a = 1 AND FALSE = -1  | 18 | -1",
    })
    void shouldRefuseComparingABooleanWithANumberOrAString(String selector, int position, String token) {
        SelectorSyntaxException e = error(selector);
        assertThat(e.position()).as(e.getMessage()).isEqualTo(position);
        assertThat(e.token()).as(e.getMessage()).isEqualTo(token);
        assertThat(e.getMessage()).contains("a boolean compares only with a boolean");
    }

    @Test
    void shouldAcceptComparingBooleansWithBooleansAndIdentifiers() {
        assertThat(eval("TRUE = TRUE")).isTrue();
        assertThat(eval("(a = 1) <> FALSE", "a", 1)).isTrue();
        assertThat(eval("(a = 1) = b", "a", 1, "b", true)).isTrue();
        assertThat(eval("flag = 1", "flag", true)).as("known only at evaluation: FALSE").isFalse();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "a != 1          | 2  | !=",
        "a == 1          | 3  | =",
        "a = \"x\"       | 4  | \"",
        "a = 1 && b      | 6  | &",
        "a = 12abc       | 4  | 12abc",
        "a = 1e          | 4  | 1e",
        "a = 1e+         | 4  | 1e+",
        "a = 0x          | 4  | 0x",
        "a = 0xZ1        | 4  | 0xZ1",
        "a = 09          | 4  | 09",
        "a = 1.5L        | 4  | 1.5L",
        "a = 9223372036854775808 | 4 | 9223372036854775808",
        "a = 0x1FFFFFFFFFFFFFFFF | 4 | 0x1FFFFFFFFFFFFFFFF",
        "a = 1e400       | 4  | 1e400",
        "a = 1e-400      | 4  | 1e-400",
        "a = #           | 4  | #",
        "a = 1 -- note   | 6  | --",
        "a = 1 /* x */   | 6  | /*",
        "a = . 5         | 4  | .",
    })
    void shouldRefuseBadCharactersAndMalformedNumbers(String selector, int position, String token) {
        SelectorSyntaxException e = error(selector);
        assertThat(e.position()).as(e.getMessage()).isEqualTo(position);
        assertThat(e.token()).as(e.getMessage()).isEqualTo(token);
    }

    @Test
    void shouldHintAtTheUsualMistakes() {
        assertThat(error("a != 1").getMessage()).endsWith("(not equal is written <>)");
        assertThat(error("a = \"x\"").getMessage()).endsWith("(string literals use single quotes)");
        assertThat(error("a = 09").getMessage()).endsWith("(a leading 0 makes it octal)");
        assertThat(error("a NOT = 1").getMessage()).endsWith("(expected BETWEEN, LIKE or IN after NOT)");
        assertThat(error("a + 1").getMessage()).endsWith("(expected a comparison operator)");
        assertThat(error("a = 1 -- x").getMessage()).contains("SQL comments are not supported");
        assertThat(eval("a = 1 - - 2", "a", 3)).isTrue();
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(strings = {"", "   ", "\t\n"})
    void shouldTreatNullEmptyAndBlankAsNoSelector(String selector) {
        Selector s = Selector.compile(selector);
        assertThat(s.matchesAll()).isTrue();
        assertThat(s.matches(id -> {
            throw new AssertionError("no selector reads nothing");
        })).isTrue();
        assertThat(s.identifiers()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "57                    | 57",
        "-957                  | -957",
        "+62                   | 62",
        "- 5                   | -5",
        "- -5                  | 5",
        "10L                   | 10",
        "10l                   | 10",
        "0x1F                  | 31",
        "0X1fL                 | 31",
        "017                   | 15",
        "0                     | 0",
        "9223372036854775807   | 9223372036854775807",
        "-9223372036854775808  | -9223372036854775808",
        "0xFFFFFFFFFFFFFFFF    | -1",
        "0x8000000000000000    | -9223372036854775808",
    })
    void shouldReadExactNumericLiteralsAsJavaLongLiterals(String literal, long expected) {
        assertThat(eval("x = " + literal, "x", expected)).isTrue();
        assertThat(eval("x = " + literal, "x", expected + 1)).isFalse();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "7E3      | 7000.0",
        "7e3      | 7000.0",
        "-57.9E2  | -5790.0",
        "7.       | 7.0",
        ".5       | 0.5",
        "95.7     | 95.7",
        "+6.2     | 6.2",
        "1.5e-3   | 0.0015",
        "1E+2     | 100.0",
        "2d       | 2.0",
        "2.5D     | 2.5",
        "1f       | 1.0",
    })
    void shouldReadApproximateNumericLiteralsAsJavaFloatingPointLiterals(String literal, double expected) {
        assertThat(eval("x = " + literal, "x", expected)).isTrue();
        assertThat(eval("x = " + literal, "x", expected + 1)).isFalse();
    }

    @Test
    void shouldRoundAFloatSuffixedLiteralToFloat() {
        assertThat(eval("x = 1.1f", "x", 1.1f)).isTrue();
        assertThat(eval("x = 1.1", "x", 1.1f)).isFalse(); // Java: (double) 1.1f != 1.1
        assertThat(eval("x = 1.1", "x", 1.1d)).isTrue();
    }

    @Test
    void shouldReadStringLiteralsWithDoubledQuotes() {
        assertThat(eval("s = 'literal''s'", "s", "literal's")).isTrue();
        assertThat(eval("s = ''''", "s", "'")).isTrue();
        assertThat(eval("s = ''", "s", "")).isTrue();
        assertThat(eval("s = 'Zürich \uD83D\uDE00'", "s", "Zürich \uD83D\uDE00")).isTrue();
        assertThat(eval("s = 'a\nb'", "s", "a\nb")).isTrue();
    }

    @Test
    void shouldMatchKeywordsAndBooleanLiteralsInAnyCase() {
        assertThat(eval("a = 1 and b = 2", "a", 1, "b", 2)).isTrue();
        assertThat(eval("a = 1 Or b = 2", "a", 0, "b", 2)).isTrue();
        assertThat(eval("not a = 1", "a", 0)).isTrue();
        assertThat(eval("a bEtWeEn 1 AnD 3", "a", 2)).isTrue();
        assertThat(eval("a not in ('x')", "a", "y")).isTrue();
        assertThat(eval("a like 'x!%' escape '!'", "a", "x%")).isTrue();
        assertThat(eval("a is not null", "a", 1)).isTrue();
        assertThat(eval("f = true", "f", true)).isTrue();
        assertThat(eval("f = False", "f", false)).isTrue();
        assertThat(eval("TrUe")).isTrue();
    }

    @Test
    void shouldTreatIdentifiersCaseSensitively() {
        assertThat(eval("Color = 'red'", "color", "red")).isNull();
        assertThat(eval("color = 'red'", "color", "red")).isTrue();
        assertThat(eval("jmsPriority = 4", "JMSPriority", 4)).isNull();
    }

    @Test
    void shouldMatchKeywordsByAsciiCaseOnly() {
        // toUpperCase would turn the dotless i of "ın" into IN
        assertThat(eval("\u0131n = 1", "\u0131n", 1)).isTrue();
    }

    @Test
    void shouldAcceptJavaIdentifiers() {
        assertThat(eval("$a_1 = 1", "$a_1", 1)).isTrue();
        assertThat(eval("_x = 1", "_x", 1)).isTrue();
        assertThat(eval("größe = 1", "größe", 1)).isTrue();
        assertThat(eval("JMS_vendor = 1 AND JMSXGroupSeq = 2", "JMS_vendor", 1, "JMSXGroupSeq", 2)).isTrue();
        assertThat(Selector.compile("a = 1 AND b > c OR a < 2").identifiers()).containsExactly("a", "b", "c");
    }

    @Test
    void shouldNotParseIdentifiersStartingWithADigit() {
        assertThatThrownBy(() -> Selector.compile("1a = 1")).isInstanceOf(SelectorSyntaxException.class);
    }

    @Test
    void shouldPrintTheParsedTreeWithItsPrecedence() {
        assertThat(Selector.compile("a = 1 OR b = 2 AND NOT c = 3").toString())
                .isEqualTo("Selector[a = 1 OR b = 2 AND NOT c = 3 => ((a = 1) OR ((b = 2) AND (NOT (c = 3))))]");
        assertThat(Selector.compile("x + 2 * -y > 1 - 2 - 3").toString())
                .endsWith("=> ((x + (2 * -y)) > ((1 - 2) - 3))]");
    }
    @Test
    void shouldKeepLongAndOrChainsFlat() {
        StringBuilder ors = new StringBuilder();
        for (int i = 0; i < 10_000; i++) {
            ors.append(i == 0 ? "" : " OR ").append("id = ").append(i);
        }
        Selector s = Selector.compile(ors.toString());
        assertThat(s.evaluate(id -> 9_999)).isTrue();
        assertThat(s.evaluate(id -> 10_000)).isFalse();
        assertThat(s.evaluate(id -> null)).isNull();
        assertThat(Selector.compile(ors.toString().replace(" OR ", " AND ")).evaluate(id -> 1)).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"(", "NOT ", "- "})
    void shouldRefuseDeepNestingWithASyntaxErrorNotAStackOverflow(String opener) {
        String tail = opener.equals("(") ? "a = 1" + ")".repeat(100_000) : opener.equals("- ") ? "1 = a" : "a";
        SelectorSyntaxException e = error(opener.repeat(100_000) + tail);
        assertThat(e.getMessage()).startsWith("Selector nests too deeply at position " + 65 * opener.length());
        String fine = opener.repeat(Parser.MAX_HEIGHT - 2)
                + (opener.equals("(") ? "a = 1" + ")".repeat(Parser.MAX_HEIGHT - 2) : tail);
        assertThat(Selector.compile(fine).matchesAll()).isFalse();
    }

    @Test
    void shouldRefuseArithmeticChainsHigherThanTheLimit() {
        assertThat(eval("1" + " + 1".repeat(50) + " = 51")).isTrue();
        assertThat(error("1" + " + 1".repeat(Parser.MAX_HEIGHT) + " = 1").getMessage())
                .startsWith("Selector nests too deeply");
    }
}
