package io.fastblock.gateway.iscsi.login;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The {@code key=value\0} text format of Login and Text PDUs (RFC 7143 section 6). */
public final class TextKeys {
    private TextKeys() {
    }

    /** A key/value list that breaks the format rules. */
    public static final class MalformedKeysException extends Exception {
        private static final long serialVersionUID = 1L;

        public MalformedKeysException(String message) {
            super(message);
        }
    }

    /** Parses the pairs in order; a key given twice or a pair without '=' is an error. */
    public static Map<String, String> parse(ByteBuf data) throws MalformedKeysException {
        String text = data.toString(StandardCharsets.UTF_8);
        Map<String, String> keys = new LinkedHashMap<>();
        int pos = 0;
        while (pos < text.length()) {
            int end = text.indexOf('\0', pos);
            if (end < 0) {
                end = text.length();
            }
            String pair = text.substring(pos, end);
            pos = end + 1;
            if (pair.isEmpty()) {
                continue; // padding or a stray separator
            }
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new MalformedKeysException("not key=value: " + pair);
            }
            String key = pair.substring(0, eq);
            if (key.length() > 63) {
                throw new MalformedKeysException("key longer than 63 bytes: " + key);
            }
            if (keys.put(key, pair.substring(eq + 1)) != null) {
                throw new MalformedKeysException("key offered twice: " + key);
            }
        }
        return keys;
    }

    public static ByteBuf encode(ByteBufAllocator alloc, List<Map.Entry<String, String>> pairs) {
        ByteBuf out = alloc.buffer();
        for (Map.Entry<String, String> e : pairs) {
            out.writeCharSequence(e.getKey(), StandardCharsets.UTF_8);
            out.writeByte('=');
            out.writeCharSequence(e.getValue(), StandardCharsets.UTF_8);
            out.writeByte(0);
        }
        return out;
    }
}
