package dev.millrace.protocol.selector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(20)
class LikePatternTest {

    private static boolean like(String pattern, String value) {
        return LikePattern.compile(pattern, -1).matches(value);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "abc     | abc    | true",
        "abc     | abcd   | false",
        "``      | ``     | true",
        "``      | a      | false",
        "%       | ``     | true",
        "%       | xyz    | true",
        "%%      | xyz    | true",
        "ab%     | abc    | true",
        "ab%     | ab     | true",
        "ab%     | a      | false",
        "%bc     | abc    | true",
        "%bc     | abcd   | false",
        "%b%     | abc    | true",
        "%b%     | ac     | false",
        "_       | a      | true",
        "_       | ``     | false",
        "_       | ab     | false",
        "a_c     | abc    | true",
        "a_c     | ac     | false",
        "a%c%e   | abcde  | true",
        "a%c%e   | ace    | true",
        "a%c%e   | abcdf  | false",
        "%a%a%a  | aaa    | true",
        "%a%a%a  | aa     | false",
        "%ab_    | xabab  | false",
        "%ab_    | xababc | true",
        "_%_     | ab     | true",
        "_%_     | a      | false",
        "A%      | abc    | false",
    })
    void shouldMatchWildcards(String pattern, String value, boolean expected) {
        assertThat(like(pattern, value)).isEqualTo(expected);
    }

    @Test
    void shouldMatchASupplementaryCharacterWithOneUnderscore() {
        String smiley = "\uD83D\uDE00";
        assertThat(like("_", smiley)).isTrue();
        assertThat(like("a_b", "a" + smiley + "b")).isTrue();
        assertThat(like("__", smiley)).isFalse();
    }

    @Test
    void shouldTreatEscapedCharactersLiterally() {
        assertThat(LikePattern.compile("a!%", '!').matches("a%")).isTrue();
        assertThat(LikePattern.compile("a!%", '!').matches("ab")).isFalse();
        assertThat(LikePattern.compile("!_!!", '!').matches("_!")).isTrue();
        assertThat(LikePattern.compile("%!%%", '!').matches("50% off")).isTrue();
        assertThat(LikePattern.compile("%!%%", '!').matches("50 off")).isFalse();
    }

    @Test
    void shouldRefuseAnEscapeBeforeAnOrdinaryCharacterOrAtTheEnd() {
        assertThatThrownBy(() -> LikePattern.compile("a!b", '!')).hasMessageContaining("not 'b'");
        assertThatThrownBy(() -> LikePattern.compile("a!", '!')).hasMessageContaining("ends with the escape");
    }

    @Test
    void shouldAgreeWithARegularExpressionOnRandomInputs() {
        Random random = new Random(42);
        String alphabet = "ab%_";
        for (int i = 0; i < 20_000; i++) {
            String pattern = randomString(random, alphabet, 6);
            String value = randomString(random, "ab", 7);
            String regex = pattern.replace("%", ".*").replace("_", ".");
            assertThat(like(pattern, value)).as("'%s' LIKE '%s' (seed 42, #%d)", value, pattern, i)
                    .isEqualTo(Pattern.matches(regex, value));
        }
    }

    private static String randomString(Random random, String alphabet, int maxLength) {
        int length = random.nextInt(maxLength + 1);
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < length; i++) {
            s.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return s.toString();
    }
}
