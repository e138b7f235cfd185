package io.fastblock.namenode.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.namenode.api.SizeParser.InvalidSizeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SizeParserTest {
    @ParameterizedTest
    @CsvSource({
            "512, 512",
            "1073741824, 1073741824",
            "1K, 1024",
            "1KiB, 1024",
            "1Ki, 1024",
            "1KB, 1024",
            "512MiB, 536870912",
            "64M, 67108864",
            "10G, 10737418240",
            "10g, 10737418240",
            "1T, 1099511627776",
            "1P, 1125899906842624",
            "' 10G ', 10737418240",
            "0, 0",
            "9223372036854775807, 9223372036854775807",
            "8191P, 9222246136947933184",
    })
    void parsesAcceptedForms(String text, long expected) {
        assertEquals(expected, SizeParser.parseBytes(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "abc", "10X", "1.5G", "-1", "-512", "10 G", "G", "10GB5", "10iB", "10B",
            "0x200", "1e9", "+512"})
    void rejectsMalformed(String text) {
        InvalidSizeException e = assertThrows(InvalidSizeException.class, () -> SizeParser.parseBytes(text));
        assertTrue(!e.getMessage().isBlank());
    }

    @Test
    void rejectsNull() {
        assertThrows(InvalidSizeException.class, () -> SizeParser.parseBytes(null));
    }

    @Test
    void negativeSaysPositive() {
        assertTrue(assertThrows(InvalidSizeException.class, () -> SizeParser.parseBytes("-1")).getMessage()
                .contains("positive"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"9223372036854775808", "99999999999999999999999", "8192P", "9007199254740992K"})
    void rejectsOverflowBeyondLong(String text) {
        assertTrue(assertThrows(InvalidSizeException.class, () -> SizeParser.parseBytes(text)).getMessage()
                .contains("too large"));
    }

    @Test
    void volumeSizeMustBePositive() {
        assertTrue(assertThrows(InvalidSizeException.class, () -> SizeParser.parseVolumeSize("0")).getMessage()
                .contains("positive"));
        assertThrows(InvalidSizeException.class, () -> SizeParser.checkVolumeSize(0));
        assertThrows(InvalidSizeException.class, () -> SizeParser.checkVolumeSize(-1));
        assertThrows(InvalidSizeException.class, () -> SizeParser.checkVolumeSize(Long.MIN_VALUE));
    }

    @Test
    void volumeSizeMustBeBlockAligned() {
        assertTrue(assertThrows(InvalidSizeException.class, () -> SizeParser.parseVolumeSize("511")).getMessage()
                .contains("multiple of 512"));
        assertThrows(InvalidSizeException.class, () -> SizeParser.checkVolumeSize(513));
        assertThrows(InvalidSizeException.class, () -> SizeParser.checkVolumeSize(1000));
        assertEquals(512, SizeParser.parseVolumeSize("512"));
        assertEquals(1024, SizeParser.parseVolumeSize("1K"));
    }

    @Test
    void volumeSizeHasAnUpperBound() {
        assertEquals(SizeParser.MAX_VOLUME_SIZE, SizeParser.parseVolumeSize("1024P"));
        assertThrows(InvalidSizeException.class, () -> SizeParser.parseVolumeSize("1025P"));
        assertThrows(InvalidSizeException.class, () -> SizeParser.checkVolumeSize(Long.MAX_VALUE - 511));
    }
}
