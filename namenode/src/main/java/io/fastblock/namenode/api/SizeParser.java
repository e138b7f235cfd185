package io.fastblock.namenode.api;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte sizes as people write them: {@code 1073741824}, {@code "10G"}, {@code "512MiB"}, {@code "1T"}.
 * Suffixes are binary (K = 1024) because block devices are; "i", "iB" or "B" may follow the letter
 * and mean the same thing. Anything else is rejected with a message naming what was wrong.
 */
public final class SizeParser {
    public static final int BLOCK_SIZE = 512;
    /** Keeps chunk arithmetic (size + chunkSize - 1) far from overflow and is far beyond any real disk. */
    public static final long MAX_VOLUME_SIZE = 1L << 60;

    private static final Pattern FORM = Pattern.compile("([0-9]+)(?:([KMGTP])(I|IB|B)?)?");

    private SizeParser() {
    }

    /** Parses a non-negative byte count; throws {@link InvalidSizeException} for anything malformed or too large. */
    public static long parseBytes(String text) {
        if (text == null || text.isBlank()) {
            throw new InvalidSizeException("size is empty");
        }
        String t = text.trim();
        if (t.startsWith("-")) {
            throw new InvalidSizeException("size must be positive, got '" + text + "'");
        }
        Matcher m = FORM.matcher(t.toUpperCase(Locale.ROOT));
        if (!m.matches()) {
            throw new InvalidSizeException("size '" + text
                    + "' is not a whole number of bytes optionally followed by K, M, G, T or P (e.g. 10G, 512MiB)");
        }
        long number;
        try {
            number = Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
            throw new InvalidSizeException("size '" + text + "' is too large");
        }
        int shift = m.group(2) == null ? 0 : 10 * ("KMGTP".indexOf(m.group(2).charAt(0)) + 1);
        if (shift > 0 && number > (Long.MAX_VALUE >> shift)) {
            throw new InvalidSizeException("size '" + text + "' is too large");
        }
        return number << shift;
    }

    /** A volume size given as text: see {@link #parseBytes} and {@link #checkVolumeSize}. */
    public static long parseVolumeSize(String text) {
        return checkVolumeSize(parseBytes(text));
    }

    /** Volume sizes must be positive, a whole number of 512-byte blocks and at most {@link #MAX_VOLUME_SIZE}. */
    public static long checkVolumeSize(long bytes) {
        if (bytes <= 0) {
            throw new InvalidSizeException("size must be positive, got " + bytes);
        }
        if (bytes % BLOCK_SIZE != 0) {
            throw new InvalidSizeException("size must be a multiple of " + BLOCK_SIZE + " bytes, got " + bytes);
        }
        if (bytes > MAX_VOLUME_SIZE) {
            throw new InvalidSizeException("size must be at most 1 EiB (" + MAX_VOLUME_SIZE + " bytes), got " + bytes);
        }
        return bytes;
    }

    /** Thrown for a size that cannot be used; the message says why. */
    public static final class InvalidSizeException extends IllegalArgumentException {
        public InvalidSizeException(String message) {
            super(message);
        }
    }
}
