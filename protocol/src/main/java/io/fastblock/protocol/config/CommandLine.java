package io.fastblock.protocol.config;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * {@code --name=value} / {@code --name value} flags for a server's main. Each server's typed
 * config reads what it knows and then calls {@link #rejectUnknown()}, so a misspelt flag stops
 * the server with a message naming it instead of being ignored. The flags read, with the
 * defaults they were read with, are also what {@link #usage} lists for {@code --help}: the
 * help text cannot name a flag the server does not read, nor a default it does not use.
 */
public final class CommandLine {
    private final Map<String, String> values = new LinkedHashMap<>();
    private final Set<String> read = new HashSet<>();
    /** Every flag asked for, in the order asked, with the default shown for it (null: none shown). */
    private final Map<String, String> shownDefaults = new LinkedHashMap<>();

    private CommandLine() {
    }

    public static CommandLine parse(String... args) {
        CommandLine cl = new CommandLine();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--") || a.length() == 2) {
                throw new IllegalArgumentException("expected --name=value, got '" + a + "'");
            }
            String body = a.substring(2);
            int eq = body.indexOf('=');
            if (eq >= 0) {
                cl.values.put(body.substring(0, eq), body.substring(eq + 1));
            } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                cl.values.put(body, args[++i]);
            } else {
                cl.values.put(body, "true");
            }
        }
        return cl;
    }

    /** True when the arguments ask for the usage text ({@code --help} or {@code -h}) rather than a run. */
    public static boolean wantsHelp(String... args) {
        for (String a : args) {
            if (a.equals("--help") || a.equals("-h")) {
                return true;
            }
        }
        return false;
    }

    /**
     * The flag's text, null if not given, for a flag whose default is computed by the caller;
     * {@code shownDefault} is what {@link #usage} says it defaults to (null or empty: nothing).
     */
    public String given(String name, String shownDefault) {
        return value(name, shownDefault);
    }

    private String value(String name, String shownDefault) {
        read.add(name);
        shownDefaults.putIfAbsent(name, shownDefault == null || shownDefault.isEmpty() ? null : shownDefault);
        return values.get(name);
    }

    public String get(String name, String defaultValue) {
        String v = value(name, defaultValue);
        return v == null ? defaultValue : v;
    }

    /** A byte count as {@link ByteSize} reads it (268435456, 256M); {@code --help} shows the default so too. */
    public long getBytes(String name, long defaultValue) {
        String v = value(name, ByteSize.format(defaultValue));
        return v == null ? defaultValue : ByteSize.parse(name, v);
    }

    public int getInt(String name, int defaultValue) {
        String v = value(name, Integer.toString(defaultValue));
        if (v == null) {
            return defaultValue;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be an integer, got '" + v + "'");
        }
    }

    public long getLong(String name, long defaultValue) {
        String v = value(name, Long.toString(defaultValue));
        if (v == null) {
            return defaultValue;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be an integer, got '" + v + "'");
        }
    }

    public boolean getBoolean(String name, boolean defaultValue) {
        String v = value(name, Boolean.toString(defaultValue));
        if (v == null) {
            return defaultValue;
        }
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("yes")) {
            return true;
        }
        if (v.equalsIgnoreCase("false") || v.equalsIgnoreCase("no")) {
            return false;
        }
        throw new IllegalArgumentException("--" + name + " must be true or false, got '" + v + "'");
    }

    /** A share in (0, 1], written as a fraction ("0.5") or a percentage ("50%"). */
    public double getShare(String name, double defaultValue) {
        String v = value(name, Double.toString(defaultValue));
        if (v == null) {
            return defaultValue;
        }
        String t = v.trim();
        double share;
        try {
            share = t.endsWith("%") ? Double.parseDouble(t.substring(0, t.length() - 1).trim()) / 100 : Double.parseDouble(t);
        } catch (NumberFormatException e) {
            share = Double.NaN;
        }
        if (!(share > 0 && share <= 1)) {
            throw new IllegalArgumentException("--" + name + " must be a share in (0, 1] (e.g. 0.5 or 50%), got '" + v + "'");
        }
        return share;
    }

    /** Throws naming every flag that no getter asked for. */
    public void rejectUnknown() {
        Set<String> unknown = new HashSet<>(values.keySet());
        unknown.removeAll(read);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown option(s): --" + String.join(", --", unknown));
        }
    }

    /** The flags asked for so far, in the order asked. */
    public Set<String> flagsRead() {
        return java.util.Collections.unmodifiableSet(shownDefaults.keySet());
    }

    /**
     * The {@code --help} text of a config whose {@code parse} reads all of its flags (as every
     * server's does on an empty command line): {@link #usage(String, Map)} of what it read.
     */
    public static String usage(java.util.function.Function<CommandLine, ?> parse, String synopsis,
                               Map<String, String> descriptions) {
        CommandLine cl = parse();
        parse.apply(cl);
        return cl.usage(synopsis, descriptions);
    }

    /** {@link #mismatch} of the flags {@code parse} reads on an empty command line, for a config's test. */
    public static String helpMismatch(java.util.function.Function<CommandLine, ?> parse, Map<String, String> descriptions) {
        CommandLine cl = parse();
        parse.apply(cl);
        return cl.mismatch(descriptions);
    }

    /**
     * What keeps a help text honest: the flags read so far that {@code descriptions} lacks, and those
     * it describes that were never read; empty when the two match.
     */
    public String mismatch(Map<String, String> descriptions) {
        java.util.TreeSet<String> undescribed = new java.util.TreeSet<>(shownDefaults.keySet());
        undescribed.removeAll(descriptions.keySet());
        java.util.TreeSet<String> unread = new java.util.TreeSet<>(descriptions.keySet());
        unread.removeAll(shownDefaults.keySet());
        return (undescribed.isEmpty() ? "" : "read but not described: " + undescribed)
                + (unread.isEmpty() ? "" : (undescribed.isEmpty() ? "" : "; ") + "described but not read: " + unread);
    }

    /**
     * The text for {@code --help}: {@code synopsis}, then every flag asked for so far (a config reads
     * all of its flags on an empty command line) with its description and the default it was read
     * with. A flag without a description is listed with its default alone.
     */
    public String usage(String synopsis, Map<String, String> descriptions) {
        int width = 0;
        for (String name : shownDefaults.keySet()) {
            width = Math.max(width, name.length());
        }
        StringBuilder out = new StringBuilder("usage: ").append(synopsis).append('\n');
        for (Map.Entry<String, String> f : shownDefaults.entrySet()) {
            String text = descriptions.getOrDefault(f.getKey(), "");
            String shown = f.getValue() == null ? "" : (text.isEmpty() ? "" : " ") + "(default: " + f.getValue() + ")";
            out.append("  --").append(f.getKey()).append(" ".repeat(width - f.getKey().length() + 2))
                    .append(text).append(shown).append('\n');
        }
        return out.toString();
    }
}
