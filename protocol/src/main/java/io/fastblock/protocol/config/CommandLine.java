package io.fastblock.protocol.config;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * {@code --name=value} / {@code --name value} flags for a server's main. Each server's typed
 * config reads what it knows and then calls {@link #rejectUnknown()}, so a misspelt flag stops
 * the server with a message naming it instead of being ignored.
 */
public final class CommandLine {
    private final Map<String, String> values = new LinkedHashMap<>();
    private final Set<String> read = new HashSet<>();

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

    public String get(String name, String defaultValue) {
        read.add(name);
        return values.getOrDefault(name, defaultValue);
    }

    public int getInt(String name, int defaultValue) {
        String v = get(name, null);
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
        String v = get(name, null);
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
        String v = get(name, null);
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
        String v = get(name, null);
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
}
