package io.fastblock.protocol.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CommandLineTest {
    @Test
    void sharesAreFractionsOrPercentages() {
        CommandLine cl = CommandLine.parse("--a=0.25", "--b", "40%", "--c= 1 ");
        assertEquals(0.25, cl.getShare("a", 0.5));
        assertEquals(0.4, cl.getShare("b", 0.5), 1e-12);
        assertEquals(1.0, cl.getShare("c", 0.5));
        assertEquals(0.5, cl.getShare("absent", 0.5));
        cl.rejectUnknown(); // every flag was read
        for (String bad : new String[] {"0", "-0.1", "1.01", "150%", "half", "%", "NaN"}) {
            String message = assertThrows(IllegalArgumentException.class,
                    () -> CommandLine.parse("--x=" + bad).getShare("x", 0.5)).getMessage();
            assertTrue(message.contains("--x must be a share in (0, 1]") && message.contains("'" + bad + "'"), message);
        }
    }

    @Test
    void theHelpTextListsTheFlagsReadWithTheirDefaultsAndDescriptions() {
        assertTrue(CommandLine.wantsHelp("--port=1", "--help"));
        assertTrue(CommandLine.wantsHelp("-h"));
        assertFalse(CommandLine.wantsHelp("--port", "3260", "--helpful=1"));
        CommandLine cl = CommandLine.parse("--port=99");
        cl.get("data-dir", "./var");
        cl.getInt("port", 3260);
        cl.get("token", "");
        cl.get("segment-size", null);
        cl.getBoolean("no-demo", false);
        cl.getShare("target", 0.5);
        cl.getLong("lease-ms", 15_000);
        cl.getInt("port", 7); // asked again: listed once, with the first default
        assertEquals(List.of("data-dir", "port", "token", "segment-size", "no-demo", "target", "lease-ms"),
                List.copyOf(cl.flagsRead()));
        String usage = cl.usage("thing [--name=value ...]", Map.of("data-dir", "where data lives", "port", "TCP port",
                "segment-size", "log segment size (default: 64M)", "token", "API token; none: open"));
        assertEquals(String.join("\n",
                "usage: thing [--name=value ...]",
                "  --data-dir      where data lives (default: ./var)",
                "  --port          TCP port (default: 3260)",
                "  --token         API token; none: open",
                "  --segment-size  log segment size (default: 64M)",
                "  --no-demo       (default: false)",
                "  --target        (default: 0.5)",
                "  --lease-ms      (default: 15000)",
                ""), usage, "the default shown is the one read with, not the value given");
    }

    @Test
    void aMismatchBetweenFlagsReadAndDescribedIsNamed() {
        CommandLine cl = CommandLine.parse();
        cl.get("a", "1");
        cl.getInt("b", 2);
        assertEquals("", cl.mismatch(Map.of("a", "x", "b", "y")));
        assertEquals("read but not described: [b]; described but not read: [c]", cl.mismatch(Map.of("a", "x", "c", "z")));
        assertEquals("described but not read: [c]", cl.mismatch(Map.of("a", "x", "b", "y", "c", "z")));
    }

    @Test
    void byteCountsAreReadAndShownAsByteSizeWritesThem() {
        CommandLine cl = CommandLine.parse("--a=256M", "--b", "4096");
        assertEquals(256L << 20, cl.getBytes("a", 1));
        assertEquals(4096, cl.getBytes("b", 1));
        assertEquals(64L << 20, cl.getBytes("c", 64L << 20));
        assertEquals("usage: x\n  --a  (default: 1)\n  --b  (default: 1)\n  --c  (default: 64M)\n", cl.usage("x", Map.of()));
        String message = assertThrows(IllegalArgumentException.class,
                () -> CommandLine.parse("--d=lots").getBytes("d", 1)).getMessage();
        assertTrue(message.contains("--d must be a byte count"), message);
    }

    @Test
    void byteSizesAreShownAsTheyAreWritten() {
        assertEquals("64M", ByteSize.format(64L << 20));
        assertEquals("1G", ByteSize.format(1L << 30));
        assertEquals("1536K", ByteSize.format(1536L << 10));
        assertEquals("4097", ByteSize.format(4097));
        assertEquals("0", ByteSize.format(0));
        for (long n : new long[] {4096, 3L << 40, 12345, 5L << 20}) {
            assertEquals(n, ByteSize.parse("x", ByteSize.format(n)));
        }
    }

    @Test
    void zeroIsAByteCountOnlyWhereItTurnsSomethingOff() {
        assertEquals(0, ByteSize.parseOrZero("x", "0"));
        assertEquals(0, ByteSize.parseOrZero("x", " 0 "));
        assertEquals(128L << 10, ByteSize.parseOrZero("x", "128K"));
        assertThrows(IllegalArgumentException.class, () -> ByteSize.parse("x", "0"));
        assertThrows(IllegalArgumentException.class, () -> ByteSize.parseOrZero("x", "0K"));
        assertThrows(IllegalArgumentException.class, () -> ByteSize.parseOrZero("x", "-1"));
    }

    @Test
    void aConfigsHelpIsWhatItsParseReadsOnAnEmptyCommandLine() {
        java.util.function.Function<CommandLine, Object> parse = cl -> List.of(cl.getInt("port", 80), cl.get("name", "x"));
        assertEquals("usage: demo\n  --port  (default: 80)\n  --name  the name (default: x)\n",
                CommandLine.usage(parse, "demo", Map.of("name", "the name")));
        assertEquals("read but not described: [port]", CommandLine.helpMismatch(parse, Map.of("name", "the name")));
    }
}
