package io.fastblock.gateway.iscsi.login;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TextKeysTest {
    private static ByteBuf text(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    }

    @Test
    void parsesPairsInOrder() throws Exception {
        Map<String, String> keys = TextKeys.parse(text("InitiatorName=iqn.x\0SessionType=Normal\0Empty=\0"));
        assertEquals(List.of("InitiatorName", "SessionType", "Empty"), List.copyOf(keys.keySet()));
        assertEquals("iqn.x", keys.get("InitiatorName"));
        assertEquals("", keys.get("Empty"));
    }

    @Test
    void valueMayContainEquals() throws Exception {
        assertEquals("a=b", TextKeys.parse(text("K=a=b\0")).get("K"));
    }

    @Test
    void duplicateKeyIsAnError() {
        TextKeys.MalformedKeysException e = assertThrows(TextKeys.MalformedKeysException.class,
                () -> TextKeys.parse(text("MaxBurstLength=512\0MaxBurstLength=1024\0")));
        assertTrue(e.getMessage().contains("twice"), e.getMessage());
    }

    @Test
    void pairWithoutEqualsIsAnError() {
        assertThrows(TextKeys.MalformedKeysException.class, () -> TextKeys.parse(text("JustAKey\0")));
        assertThrows(TextKeys.MalformedKeysException.class, () -> TextKeys.parse(text("=value\0")));
    }

    @Test
    void encodesNulTerminatedPairs() {
        ByteBuf b = TextKeys.encode(ByteBufAllocator.DEFAULT, List.of(Map.entry("A", "1"), Map.entry("B", "x,y")));
        assertEquals("A=1\0B=x,y\0", b.toString(StandardCharsets.UTF_8));
        b.release();
    }
}
