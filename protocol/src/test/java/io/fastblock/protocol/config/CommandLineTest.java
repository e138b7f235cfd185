package io.fastblock.protocol.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
}
