package dev.millrace.protocol.selector;

import static dev.millrace.protocol.selector.Selectors.eval;
import static dev.millrace.protocol.selector.Selectors.matches;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Semantics: operators, three-valued logic, types and promotion, BETWEEN/IN/LIKE/IS NULL, the specification's examples. */
@Timeout(20)
class SelectorEvaluationTest {

    /** TRUE, FALSE, UNKNOWN as boolean property values (null = not set = UNKNOWN as a condition). */
    private static final List<Boolean> TRUTHS = Arrays.asList(true, false, null);

    // ---- three-valued logic ----

    @Test
    void shouldFollowTheSqlTruthTableForAnd() {
        Boolean[][] expected = {
            {true, false, null},
            {false, false, false},
            {null, false, null},
        };
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                assertThat(eval("a AND b", "a", TRUTHS.get(i), "b", TRUTHS.get(j)))
                        .as("%s AND %s", TRUTHS.get(i), TRUTHS.get(j)).isEqualTo(expected[i][j]);
            }
        }
    }

    @Test
    void shouldFollowTheSqlTruthTableForOr() {
        Boolean[][] expected = {
            {true, true, true},
            {true, false, null},
            {true, null, null},
        };
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                assertThat(eval("a OR b", "a", TRUTHS.get(i), "b", TRUTHS.get(j)))
                        .as("%s OR %s", TRUTHS.get(i), TRUTHS.get(j)).isEqualTo(expected[i][j]);
            }
        }
    }

    @Test
    void shouldEvaluateAndOrChainsAsRepeatedBinaryOperators() {
        for (Boolean a : TRUTHS) {
            for (Boolean b : TRUTHS) {
                for (Boolean c : TRUTHS) {
                    assertThat(eval("x AND y AND z", "x", a, "y", b, "z", c)).as("%s AND %s AND %s", a, b, c)
                            .isEqualTo(eval("(x AND y) AND z", "x", a, "y", b, "z", c));
                    assertThat(eval("x OR y OR z", "x", a, "y", b, "z", c)).as("%s OR %s OR %s", a, b, c)
                            .isEqualTo(eval("(x OR y) OR z", "x", a, "y", b, "z", c));
                }
            }
        }
        assertThat(eval("x AND y AND z", "x", true, "y", null, "z", false)).isFalse();
        assertThat(eval("x AND y AND z", "x", true, "y", null, "z", true)).isNull();
        assertThat(eval("x OR y OR z", "x", false, "y", null, "z", true)).isTrue();
        assertThat(eval("x OR y OR z", "x", false, "y", null, "z", false)).isNull();
    }

    @Test
    void shouldFollowTheSqlTruthTableForNot() {
        assertThat(eval("NOT a", "a", true)).isFalse();
        assertThat(eval("NOT a", "a", false)).isTrue();
        assertThat(eval("NOT a", "a", null)).isNull();
        assertThat(eval("NOT NOT a", "a", null)).isNull();
        assertThat(eval("NOT missing = 1")).isNull();
    }

    @Test
    void shouldMatchOnlyWhenTrue() {
        assertThat(matches("a = 1", "a", 1)).isTrue();
        assertThat(matches("a = 1", "a", 2)).isFalse();
        assertThat(matches("a = 1")).isFalse(); // UNKNOWN
        assertThat(matches("NOT a = 1")).isFalse(); // still UNKNOWN
    }

    @Test
    void shouldUseComparisonsWithUnknownInsideLogic() {
        assertThat(eval("n = 1 OR a = 1", "a", 1)).isTrue();
        assertThat(eval("n = 1 AND a = 2", "a", 1)).isFalse();
        assertThat(eval("n = 1 AND a = 1", "a", 1)).isNull();
        assertThat(eval("n = 1 OR a = 2", "a", 1)).isNull();
    }

    @Test
    void shouldTreatNonBooleanIdentifiersAsUnknownConditions() {
        assertThat(eval("s", "s", "true")).isNull();
        assertThat(eval("NOT i", "i", 1)).isNull();
        assertThat(eval("TRUE")).isTrue();
        assertThat(eval("FALSE OR TRUE")).isTrue();
    }

    // ---- comparison operators ----

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "a = 5  | true", "a = 6  | false",
        "a <> 6 | true", "a <> 5 | false",
        "a < 6  | true", "a < 5  | false",
        "a > 4  | true", "a > 5  | false",
        "a <= 5 | true", "a <= 4 | false",
        "a >= 5 | true", "a >= 6 | false",
        "5 = a  | true", "6 > a  | true",
    })
    void shouldCompareNumbers(String selector, boolean expected) {
        assertThat(eval(selector, "a", 5)).isEqualTo(expected);
        assertThat(eval(selector, "a", 5L)).isEqualTo(expected);
        assertThat(eval(selector, "a", (short) 5)).isEqualTo(expected);
        assertThat(eval(selector, "a", (byte) 5)).isEqualTo(expected);
        assertThat(eval(selector, "a", 5.0)).isEqualTo(expected);
        assertThat(eval(selector, "a", 5.0f)).isEqualTo(expected);
        assertThat(eval(selector)).as("NULL operand").isNull();
    }

    @Test
    void shouldCompareStringsWithEqualsAndNotEqualsOnly() {
        assertThat(eval("s = 'abc'", "s", "abc")).isTrue();
        assertThat(eval("'abc' = s", "s", "abc")).isTrue();
        assertThat(eval("s = 'ABC'", "s", "abc")).isFalse();
        assertThat(eval("s <> 'abc'", "s", "abd")).isTrue();
        assertThat(eval("s <> 'abc'", "s", "abc")).isFalse();
        assertThat(eval("s = t", "s", "x", "t", "x")).isTrue();
        assertThat(eval("s <> t", "s", "x", "t", "y")).isTrue();
        // ordering two string properties is not allowed by the specification: FALSE, not an ordering
        assertThat(eval("s < t", "s", "a", "t", "b")).isFalse();
        assertThat(eval("s > t", "s", "a", "t", "b")).isFalse();
        assertThat(eval("s = 'x'")).isNull();
    }

    @Test
    void shouldCompareBooleansWithEqualsAndNotEqualsOnly() {
        assertThat(eval("b = TRUE", "b", true)).isTrue();
        assertThat(eval("b = FALSE", "b", true)).isFalse();
        assertThat(eval("b <> FALSE", "b", true)).isTrue();
        assertThat(eval("b = c", "b", false, "c", false)).isTrue();
        assertThat(eval("b < c", "b", false, "c", true)).isFalse();
        assertThat(eval("(a = 1) = TRUE", "a", 1)).isTrue();
        assertThat(eval("(a = 1) = FALSE", "a", 1)).isFalse();
        assertThat(eval("(a = 1) = TRUE")).isNull();
    }

    @Test
    void shouldMakeComparisonsOfDifferentTypesFalse() {
        // the specification's own example: a String property is not a number in a selector
        assertThat(eval("NumberOfOrders > 1", "NumberOfOrders", "2")).isFalse();
        assertThat(eval("s = 2", "s", "2")).isFalse();
        assertThat(eval("s <> 2", "s", "2")).isFalse();
        assertThat(eval("NOT (s = 2)", "s", "2")).isTrue();
        assertThat(eval("b = 1", "b", true)).isFalse();
        assertThat(eval("b = 'true'", "b", true)).isFalse();
        assertThat(eval("b <> 'true'", "b", true)).isFalse();
        assertThat(eval("i = 'x'", "i", 1)).isFalse();
        assertThat(eval("1 = 'x'")).isFalse();
        assertThat(eval("b = 1.5", "b", false)).isFalse();
        assertThat(eval("b <> 0", "b", false)).as("known boolean only at evaluation: FALSE, not invalid").isFalse();
        assertThat(eval("c = 'x'", "c", 'x')).as("a Character is no property type").isFalse();
        assertThat(eval("c = c", "c", 'x')).isFalse();
        assertThat(eval("c IS NULL", "c", 'x')).isFalse();
    }

    // ---- numeric promotion and arithmetic ----

    @Test
    void shouldCompareExactNumbersAsLongs() {
        long max = Long.MAX_VALUE;
        assertThat(eval("big = 9223372036854775806", "big", max - 1)).isTrue();
        assertThat(eval("big = 9223372036854775807", "big", max - 1)).as("would be equal as doubles").isFalse();
        assertThat(eval("big < 9223372036854775807", "big", max - 1)).isTrue();
        assertThat(eval("i = l", "i", 7, "l", 7L)).isTrue();
    }

    @Test
    void shouldPromoteToDoubleWhenEitherSideIsApproximate() {
        assertThat(eval("i = 5.0", "i", 5)).isTrue();
        assertThat(eval("i < 5.5", "i", 5)).isTrue();
        assertThat(eval("f = 1.5", "f", 1.5f)).isTrue();
        assertThat(eval("f = 1.1", "f", 1.1f)).as("float widens to double as in Java").isFalse();
        assertThat(eval("f = d", "f", 0.5f, "d", 0.5d)).isTrue();
        assertThat(eval("d = 1", "d", 1.0d)).isTrue();
    }

    @Test
    void shouldFollowJavaForNaN() {
        assertThat(eval("d = d", "d", Double.NaN)).isFalse();
        assertThat(eval("d <> d", "d", Double.NaN)).isTrue();
        assertThat(eval("d < 1 OR d >= 1", "d", Double.NaN)).isFalse();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "a + b = 4",
        "a - b = -2",
        "a * b = 3",
        "b / a = 3",
        "a / b = 0",
        "7 / 2 = 3",
        "-7 / 2 = -3",
        "a / 2.0 = 0.5",
        "a + 0.5 = 1.5",
        "-a = -1",
        "+a = 1",
        "- -a = 1",
        "1 + 2 * 3 = 7",
        "(1 + 2) * 3 = 9",
        "10 - 2 - 3 = 5",
        "12 / 2 / 3 = 2",
        "- 2 * 3 = -6",
        "a + b * 2 = 7",
        "y + s = 7",
        "2147483647 + 1 = 2147483648",
        "9223372036854775807 + 1 = -9223372036854775808",
        "d * 2 = 5.0",
        "d / 0 > 1000000",
        "-d / 0 < -1000000",
    })
    void shouldComputeArithmeticWithJavaPromotion(String selector) {
        assertThat(eval(selector, "a", 1, "b", 3L, "y", (byte) 3, "s", (short) 4, "d", 2.5)).isTrue();
    }

    @Test
    void shouldMakeArithmeticWithNullOrNonNumbersNull() {
        assertThat(eval("n + 1 = 1")).isNull();
        assertThat(eval("NOT (n + 1 = 1)")).isNull();
        assertThat(eval("s + 1 = 2", "s", "1")).isNull();
        assertThat(eval("-s = -1", "s", "1")).isNull();
        assertThat(eval("+s = 1", "s", "1")).isNull();
        assertThat(eval("b * 1 = 1", "b", true)).isNull();
        assertThat(eval("a + n > 0 OR a = 1", "a", 1)).isTrue();
    }

    @Test
    void shouldMakeExactDivisionByZeroNull() {
        assertThat(eval("a / 0 = 0", "a", 1)).isNull();
        assertThat(eval("a / z = 0", "a", 1, "z", 0)).isNull();
        assertThat(eval("NOT (a / z = 0)", "a", 1, "z", 0)).isNull();
        assertThat(eval("(a / z) * 2 > 0 OR a = 1", "a", 1, "z", 0)).isTrue();
        assertThat(eval("a / 0.0 > 1000", "a", 1)).as("approximate division: infinity").isTrue();
        assertThat(eval("z / 0.0 = z / 0.0", "z", 0)).as("0.0 / 0.0 is NaN").isFalse();
    }

    // ---- BETWEEN ----

    @Test
    void shouldEvaluateBetweenAsItsSpecificationEquivalent() {
        // age BETWEEN 15 AND 19 is age >= 15 AND age <= 19; NOT BETWEEN is age < 15 OR age > 19
        for (int age = 13; age <= 21; age++) {
            boolean inside = age >= 15 && age <= 19;
            assertThat(eval("age BETWEEN 15 AND 19", "age", age)).as("age %d", age).isEqualTo(inside);
            assertThat(eval("age NOT BETWEEN 15 AND 19", "age", age)).as("age %d", age).isEqualTo(!inside);
        }
        assertThat(eval("d BETWEEN 1 AND 2", "d", 1.5)).isTrue();
        assertThat(eval("a BETWEEN 1.5 AND 2.5", "a", 2)).isTrue();
        assertThat(eval("a + 1 BETWEEN b - 1 AND b * 2", "a", 3, "b", 2)).isTrue();
        assertThat(eval("a BETWEEN 1 AND 3 AND b = 2", "a", 2, "b", 2)).isTrue();
        assertThat(eval("a BETWEEN 3 AND 1", "a", 2)).isFalse();
    }

    @Test
    void shouldPropagateNullThroughBetweenAsTheEquivalentDoes() {
        assertThat(eval("n BETWEEN 1 AND 2")).isNull();
        assertThat(eval("n NOT BETWEEN 1 AND 2")).isNull();
        // 5 >= NULL AND 5 <= 2: UNKNOWN AND FALSE
        assertThat(eval("a BETWEEN n AND 2", "a", 5)).isFalse();
        assertThat(eval("a BETWEEN n AND 2", "a", 1)).isNull();
        // 5 < NULL OR 5 > 2: UNKNOWN OR TRUE
        assertThat(eval("a NOT BETWEEN n AND 2", "a", 5)).isTrue();
        assertThat(eval("a NOT BETWEEN n AND 2", "a", 1)).isNull();
        assertThat(eval("a NOT BETWEEN 1 AND n", "a", 0)).isTrue();
    }

    @Test
    void shouldMakeBetweenOnNonNumbersFalseBothWays() {
        assertThat(eval("s BETWEEN 1 AND 2", "s", "1")).isFalse();
        assertThat(eval("s NOT BETWEEN 1 AND 2", "s", "1")).isFalse();
        assertThat(eval("a BETWEEN s AND 2", "a", 1, "s", "0")).isFalse();
    }

    // ---- IN ----

    @Test
    void shouldEvaluateInWithTheSpecificationExample() {
        String in = "Country IN ('UK', 'US', 'France')";
        assertThat(eval(in, "Country", "UK")).isTrue();
        assertThat(eval(in, "Country", "Peru")).isFalse();
        String notIn = "Country NOT IN ('UK', 'US', 'France')";
        assertThat(eval(notIn, "Country", "UK")).isFalse();
        assertThat(eval(notIn, "Country", "Peru")).isTrue();
        assertThat(eval(in)).isNull();
        assertThat(eval(notIn)).isNull();
    }

    /** JMS 3.1 section 3.8.1.1: the identifier of IN "must evaluate to a String or NULL"; anything else is UNKNOWN. */
    @Test
    void shouldMakeInAndNotInUnknownOnANonString() {
        for (Object value : new Object[] {1, 1L, 2.5, true, 'x'}) {
            assertThat(eval("c IN ('1', '2')", "c", value)).as("IN on %s", value).isNull();
            assertThat(eval("c NOT IN ('1', '2')", "c", value)).as("NOT IN on %s", value).isNull();
            assertThat(matches("c NOT IN ('1', '2')", "c", value)).as("NOT IN selects no %s", value).isFalse();
            assertThat(matches("NOT (c IN ('1', '2'))", "c", value)).isFalse();
        }
    }

    /**
     * JMS 3.1 section 3.8.1.1 type mismatches, one place: LIKE on a non-String is UNKNOWN, BETWEEN on a non-number is
     * FALSE both ways (its equivalences), comparisons of non-like types FALSE, IS NULL true only without a value.
     */
    @Test
    void shouldHandleEveryTypeMismatchOfSection3811() {
        assertThat(eval("p LIKE 'x%'", "p", 1)).isNull();
        assertThat(eval("p NOT LIKE 'x%'", "p", 1)).isNull();
        assertThat(eval("p LIKE 'x%'", "p", true)).isNull();
        assertThat(matches("p NOT LIKE 'x%'", "p", 2.5)).isFalse();
        assertThat(eval("p BETWEEN 1 AND 3", "p", "2")).isFalse();
        assertThat(eval("p NOT BETWEEN 1 AND 3", "p", "2")).isFalse();
        assertThat(eval("p BETWEEN 1 AND 3", "p", true)).isFalse();
        assertThat(eval("p IS NULL", "p", true)).isFalse();
        assertThat(eval("p IS NULL", "p", "")).isFalse();
        assertThat(eval("p IS NULL")).isTrue();
        assertThat(eval("p IS NOT NULL", "p", 0)).isTrue();
        assertThat(eval("p = 'x'", "p", 1)).isFalse();
        assertThat(eval("p <> 'x'", "p", 1)).isFalse();
        assertThat(eval("p > 1", "p", true)).isFalse();
        assertThat(eval("p + 1 = 2", "p", "1")).as("arithmetic on a string is NULL").isNull();
        assertThat(eval("p", "p", 1)).as("a number as a condition").isNull();
        assertThat(eval("NOT p", "p", "TRUE")).as("a string as a condition").isNull();
    }

    @Test
    void shouldEvaluateLongInListsWithASet() {
        StringBuilder list = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            list.append(i == 0 ? "" : ", ").append("'v").append(i).append("'");
        }
        assertThat(eval("c IN (" + list + ")", "c", "v17")).isTrue();
        assertThat(eval("c IN (" + list + ")", "c", "v20")).isFalse();
        assertThat(eval("c NOT IN (" + list + ")", "c", "v20")).isTrue();
        assertThat(eval("c IN (" + list + ")")).isNull();
        assertThat(eval("c IN (" + list + ")", "c", 17)).isNull();
        assertThat(eval("c NOT IN (" + list + ")", "c", 17)).isNull();
    }

    // ---- LIKE ----

    @Test
    void shouldEvaluateLikeWithTheSpecificationExamples() {
        assertThat(eval("phone LIKE '12%3'", "phone", "123")).isTrue();
        assertThat(eval("phone LIKE '12%3'", "phone", "12993")).isTrue();
        assertThat(eval("phone LIKE '12%3'", "phone", "1234")).isFalse();
        assertThat(eval("word LIKE 'l_se'", "word", "lose")).isTrue();
        assertThat(eval("word LIKE 'l_se'", "word", "loose")).isFalse();
        assertThat(eval("underscored LIKE '\\_%' ESCAPE '\\'", "underscored", "_foo")).isTrue();
        assertThat(eval("underscored LIKE '\\_%' ESCAPE '\\'", "underscored", "bar")).isFalse();
        assertThat(eval("phone NOT LIKE '12%3'", "phone", "123")).isFalse();
        assertThat(eval("phone NOT LIKE '12%3'", "phone", "12993")).isFalse();
        assertThat(eval("phone NOT LIKE '12%3'", "phone", "1234")).isTrue();
    }

    @Test
    void shouldMakeLikeUnknownForNullAndNonStrings() {
        assertThat(eval("phone LIKE '12%'")).isNull();
        assertThat(eval("phone NOT LIKE '12%'")).isNull();
        assertThat(eval("phone LIKE '12%'", "phone", 123)).isNull();
        assertThat(eval("phone NOT LIKE '12%'", "phone", 123)).isNull();
        assertThat(eval("flag LIKE 'true'", "flag", true)).isNull();
    }

    @Test
    void shouldEscapeWildcardsAndTheEscapeCharacterItself() {
        assertThat(eval("s LIKE '100!%' ESCAPE '!'", "s", "100%")).isTrue();
        assertThat(eval("s LIKE '100!%' ESCAPE '!'", "s", "1000")).isFalse();
        assertThat(eval("s LIKE 'a!!b' ESCAPE '!'", "s", "a!b")).isTrue();
        assertThat(eval("s LIKE 'a!_%' ESCAPE '!'", "s", "a_bc")).isTrue();
        assertThat(eval("s LIKE 'a!_%' ESCAPE '!'", "s", "abc")).isFalse();
        assertThat(eval("s LIKE 'a\\%'", "s", "a\\xyz")).as("no ESCAPE: a backslash is an ordinary character")
                .isTrue();
        assertThat(eval("s LIKE '%''%'", "s", "it's")).isTrue();
    }

    // ---- IS NULL ----

    @Test
    void shouldTestForNullWithIsNull() {
        assertThat(eval("prop_name IS NULL")).isTrue();
        assertThat(eval("prop_name IS NULL", "prop_name", 0)).isFalse();
        assertThat(eval("prop_name IS NOT NULL")).isFalse();
        assertThat(eval("prop_name IS NOT NULL", "prop_name", "")).isTrue();
        assertThat(eval("NOT prop_name IS NULL", "prop_name", false)).isTrue();
    }

    // ---- header fields ----

    @Test
    void shouldEvaluateTheSpecificationExampleOverHeaderFieldsAndProperties() {
        String selector = "JMSType = 'car' AND color = 'blue' AND weight > 2500";
        assertThat(eval(selector, "JMSType", "car", "color", "blue", "weight", 3000)).isTrue();
        assertThat(eval(selector, "JMSType", "car", "color", "blue", "weight", 2500)).isFalse();
        assertThat(eval(selector, "JMSType", "car", "color", "blue")).isNull();
        assertThat(eval("JMSDeliveryMode = 'PERSISTENT'", "JMSDeliveryMode", "PERSISTENT")).isTrue();
        assertThat(eval("JMSPriority >= 5 AND JMSTimestamp > 0", "JMSPriority", 7, "JMSTimestamp", 1L)).isTrue();
    }

    @Test
    void shouldNeverReadTheHeaderFieldsSelectorsMayNotUse() {
        Object[] all = {"JMSDestination", "queue://q", "JMSReplyTo", "queue://r", "JMSRedelivered", true,
            "JMSExpiration", 5L, "JMSDeliveryTime", 6L};
        assertThat(eval("JMSRedelivered = TRUE", all)).isNull();
        assertThat(eval("JMSExpiration > 0", all)).isNull();
        assertThat(eval("JMSDeliveryTime > 0", all)).isNull();
        assertThat(eval("JMSDestination = 'queue://q'", all)).isNull();
        assertThat(eval("JMSReplyTo IS NULL AND JMSExpiration IS NULL AND JMSDestination IS NULL", all)).isTrue();
        assertThat(eval("JMSRedelivered", all)).isNull();
        assertThat(eval("JMSExpiration LIKE 'x'", all)).isNull();
        // other JMS-prefixed names are properties
        assertThat(eval("JMSXGroupSeq = 2 AND JMS_acme = 'x' AND JMSFoo = 1", "JMSXGroupSeq", 2, "JMS_acme", "x",
                "JMSFoo", 1)).isTrue();
    }

    @Test
    void shouldEvaluateLeftToRightWithinAPrecedenceLevel() {
        // AND binds tighter than OR: TRUE OR (FALSE AND FALSE)
        assertThat(eval("a = 1 OR b = 1 AND c = 1", "a", 1, "b", 0, "c", 0)).isTrue();
        assertThat(eval("(a = 1 OR b = 1) AND c = 1", "a", 1, "b", 0, "c", 0)).isFalse();
        // NOT binds tighter than AND
        assertThat(eval("NOT a = 1 AND b = 1", "a", 0, "b", 1)).isTrue();
        assertThat(eval("NOT (a = 1 AND b = 1)", "a", 1, "b", 0)).isTrue();
    }

    @Test
    void shouldNotReadTheRightOperandWhenTheLeftDecides() {
        SelectorContext ctx = id -> {
            if (id.equals("boom")) {
                throw new AssertionError("short-circuit expected");
            }
            return 1;
        };
        assertThat(Selector.compile("a = 2 AND boom = 1").evaluate(ctx)).isFalse();
        assertThat(Selector.compile("a = 1 OR boom = 1").evaluate(ctx)).isTrue();
    }
}
