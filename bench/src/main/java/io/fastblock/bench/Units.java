package io.fastblock.bench;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** fio-style sizes ({@code 4k}, {@code 1M}, {@code 2GiB}: binary multiples) and durations ({@code 30s}, {@code 500ms}, {@code 2m}). */
public final class Units {
    private static final Pattern SIZE = Pattern.compile("(\\d+)([kmgt]?)(i?b)?");
    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)?");

    private Units() {
    }

    public static long parseSize(String option, String text) {
        Matcher m = SIZE.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException(option + ": '" + text + "' is not a size (like 4096, 4k, 1M, 2G)");
        }
        int shift = switch (m.group(2)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            case "t" -> 40;
            default -> 0;
        };
        try {
            long n = Long.parseLong(m.group(1));
            if (n > (Long.MAX_VALUE >> shift)) {
                throw new NumberFormatException();
            }
            return n << shift;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + ": '" + text + "' is too large");
        }
    }

    public static long parseDurationNanos(String option, String text) {
        Matcher m = DURATION.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException(option + ": '" + text + "' is not a duration (like 30s, 500ms, 2m)");
        }
        long n;
        try {
            n = Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + ": '" + text + "' is too large");
        }
        String unit = m.group(2) == null ? "s" : m.group(2);
        long perUnit = switch (unit) {
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m" -> 60_000_000_000L;
            default -> 3_600_000_000_000L;
        };
        if (n > 24 * 3_600_000_000_000L / perUnit) {
            throw new IllegalArgumentException(option + ": '" + text + "' is longer than a day");
        }
        return n * perUnit;
    }

    /** 4096 -> "4k", 1048576 -> "1M", otherwise the byte count. */
    public static String formatSize(long bytes) {
        String[] suffix = {"", "k", "M", "G", "T"};
        int i = 0;
        while (i < suffix.length - 1 && bytes != 0 && bytes % 1024 == 0) {
            bytes /= 1024;
            i++;
        }
        return bytes + suffix[i];
    }
}
