package io.fastblock.protocol.config;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses byte counts given on the command line: plain bytes or a number with a binary suffix (K, M, G, T, optionally followed by "i", "iB" or "B"). */
public final class ByteSize {
    private static final Pattern FORMAT = Pattern.compile("^(\\d{1,18})([KMGT]?)(I|IB|B)?$");

    private ByteSize() {
    }

    public static long parse(String flag, String text) {
        Matcher m = FORMAT.matcher(text.trim().toUpperCase(Locale.ROOT));
        if (!m.matches() || (m.group(2).isEmpty() && m.group(3) != null && !m.group(3).equals("B"))) {
            throw new IllegalArgumentException("--" + flag + " must be a byte count like 268435456 or 256M, got '" + text + "'");
        }
        int shift = switch (m.group(2)) {
            case "K" -> 10;
            case "M" -> 20;
            case "G" -> 30;
            case "T" -> 40;
            default -> 0;
        };
        long n = Long.parseLong(m.group(1));
        if (n <= 0 || n > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("--" + flag + " must be positive and below 2^63, got '" + text + "'");
        }
        return n << shift;
    }

    /** A byte count as {@link #parse} reads it, or 0 (for flags where 0 turns something off). */
    public static long parseOrZero(String flag, String text) {
        return text.strip().equals("0") ? 0 : parse(flag, text);
    }

    /** {@code bytes} as {@link #parse} reads it, with the largest suffix that divides it (67108864: "64M"). */
    public static String format(long bytes) {
        String[] suffixes = {"T", "G", "M", "K"};
        for (int i = 0; i < suffixes.length; i++) {
            int shift = 40 - 10 * i;
            if (bytes != 0 && bytes % (1L << shift) == 0) {
                return (bytes >> shift) + suffixes[i];
            }
        }
        return Long.toString(bytes);
    }
}
